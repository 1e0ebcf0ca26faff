# Sourced on the GPU machine: unpacks the kits bench/apps/fetch_apps.sh put in .apps/ into ROOT
# (default /tmp/gofl-apps) and exports what the programs need to run from there: PATH, LD_LIBRARY_PATH
# (Open MPI, ScaLAPACK, gfortran, FFTW, libpython3.11; the machine's own OpenBLAS pthread build first,
# as libblas.so.3 and liblapack.so.3), OPAL_PREFIX and PMIX_INSTALL_PREFIX (Open MPI's singleton start
# finds its components and orted there), NWCHEM_BASIS_LIBRARY, QE_PSEUDO and PYSCF_SITE.
#
#   . bench/apps/unpack_apps.sh [ROOT]
APPS_ROOT=${1:-/tmp/gofl-apps}
_here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mkdir -p "$APPS_ROOT"
if [ -d "$_here/.apps/sim" ]; then
  for _d in "$_here"/.apps/sim/*.deb; do dpkg -x "$_d" "$APPS_ROOT"; done
  # QE's kit may be left out of a carry to make room (the carry limit is 64 MiB): NWChem runs without it.
  [ -f "$_here/.apps/sim/qe-pw.tar.xz" ] && mkdir -p "$APPS_ROOT/qe" && tar -C "$APPS_ROOT/qe" -xJf "$_here/.apps/sim/qe-pw.tar.xz"
  _L=$APPS_ROOT/usr/lib/x86_64-linux-gnu
  export OPAL_PREFIX=$APPS_ROOT/usr PMIX_INSTALL_PREFIX=$_L/pmix2
  # Debian installs the binary as nwchem.openmpi and names it nwchem through update-alternatives.
  [ -e "$APPS_ROOT/usr/bin/nwchem" ] || ln -s nwchem.openmpi "$APPS_ROOT/usr/bin/nwchem"
  export PATH=$APPS_ROOT/qe/bin:$APPS_ROOT/usr/bin:$PATH
  _ob=$(ls -d /usr/lib/x86_64-linux-gnu/openblas-pthread 2>/dev/null || true)
  export LD_LIBRARY_PATH=${_ob:+$_ob:}$_L:$_L/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export NWCHEM_BASIS_LIBRARY=$APPS_ROOT/usr/share/nwchem/libraries/
  export QE_PSEUDO=$APPS_ROOT/qe/pseudo
  # Open MPI run as root, on shared memory only, without a launcher (a singleton).
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
fi
if [ -d "$_here/.apps/pyscf" ]; then
  mkdir -p "$APPS_ROOT/pyscf-site"
  tar -C "$APPS_ROOT/pyscf-site" -xJf "$_here/.apps/pyscf/pyscf-site.tar.xz"
  export PYSCF_SITE=$APPS_ROOT/pyscf-site
fi
unset _here _d _L _ob _w
