#include "common/conversions.h"

namespace gofl {

std::string library_of_module(const std::string& module_path) {
  // Wheels and distribution packages both install a module under .../numpy/... or .../scipy/...
  if (module_path.find("/numpy/") != std::string::npos || module_path.find("numpy.libs") != std::string::npos)
    return "NumPy";
  if (module_path.find("/scipy/") != std::string::npos || module_path.find("scipy.libs") != std::string::npos)
    return "SciPy";
  return "";
}

bool converting_module(const std::string& module_path) {
  return module_path.find("/numpy/") != std::string::npos || module_path.find("/scipy/") != std::string::npos;
}

const char* conversion_advice(const std::string& library) {
  if (library == "NumPy")
    return "numpy.linalg copies every operand into Fortran order (one ?copy per row) and the results back; "
           "scipy.linalg on Fortran-ordered arrays (np.asfortranarray once) with overwrite_a=True and "
           "check_finite=False skips the copies";
  if (library == "SciPy")
    return "scipy.linalg copies C-ordered arrays into Fortran order and checks them for NaN first; pass "
           "Fortran-ordered arrays (np.asfortranarray once) with overwrite_a=True and check_finite=False";
  return "the program converts data between its LAPACK calls; keep operands column-major (Fortran order) "
         "where LAPACK reads them";
}

}  // namespace gofl
