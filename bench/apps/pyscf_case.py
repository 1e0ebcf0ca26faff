"""PySCF density-fitted RHF (or RKS with the functional named) on an alkane chain; prints the energy and the SCF wall time."""
import sys, time
from pyscf import gto, scf
n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
basis = sys.argv[2] if len(sys.argv) > 2 else "cc-pvdz"
# C_n H_{2n+2}: a zig-zag chain
atoms = []
for i in range(n):
    x = 1.26 * i; y = 0.0 if i % 2 == 0 else 0.89
    atoms.append(("C", (x, y, 0.0)))
    hy = -0.63 if i % 2 == 0 else 1.52
    atoms.append(("H", (x, hy, 0.89))); atoms.append(("H", (x, hy, -0.89)))
atoms.append(("H", (-1.0, -0.3, 0.0))); atoms.append(("H", (1.26 * n, 0.6, 0.0)))
mol = gto.M(atom=atoms, basis=basis, verbose=0)
method = sys.argv[3] if len(sys.argv) > 3 else "rhf"
if method == "rhf":
    mf = scf.RHF(mol).density_fit()
else:
    from pyscf import dft
    mf = dft.RKS(mol).density_fit(); mf.xc = method
mf.conv_tol = 1e-9
t = time.perf_counter(); e = mf.kernel(); t = time.perf_counter() - t
print(f"pyscf {method} C{n}H{2*n+2}/{basis}: nao {mol.nao} converged {mf.converged} energy {e:.10f} scf_s {t:.2f}")
