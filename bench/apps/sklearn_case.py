"""One scikit-learn fit, timed end to end inside the program; prints its score and the fit's seconds.

  python3 bench/apps/sklearn_case.py CASE N
  CASE: pca (PCA(svd_solver="full"), N x 3000), krr (KernelRidge(rbf), N x 400), gpr
  (GaussianProcessRegressor(RBF), N x 20), ridge (Ridge(solver="cholesky"), N x 3000)
"""
import sys, time
import numpy as np

case, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(11)
t0 = time.perf_counter()
if case == "pca":
    from sklearn.decomposition import PCA
    x = rng.standard_normal((n, 3000)) @ rng.standard_normal((3000, 3000)) / 50
    t0 = time.perf_counter()
    m = PCA(n_components=50, svd_solver="full").fit(x)
    score = float(m.explained_variance_ratio_.sum())
elif case == "krr":
    from sklearn.kernel_ridge import KernelRidge
    x = rng.standard_normal((n, 400)); y = np.sin(x[:, 0]) + 0.1 * rng.standard_normal(n)
    t0 = time.perf_counter()
    m = KernelRidge(kernel="rbf", alpha=1e-2, gamma=1.0 / 400).fit(x, y)
    score = float(m.score(x[:2000], y[:2000]))
elif case == "gpr":
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, WhiteKernel
    x = rng.standard_normal((n, 20)); y = np.sin(x[:, 0]) + 0.1 * rng.standard_normal(n)
    t0 = time.perf_counter()
    m = GaussianProcessRegressor(kernel=RBF(3.0) + WhiteKernel(0.01), optimizer=None).fit(x, y)
    score = float(m.log_marginal_likelihood_value_)
elif case == "ridge":
    from sklearn.linear_model import Ridge
    x = rng.standard_normal((n, 3000)); y = x[:, :10].sum(axis=1) + rng.standard_normal(n)
    t0 = time.perf_counter()
    m = Ridge(alpha=1.0, solver="cholesky").fit(x, y)
    score = float(m.score(x, y))
else:
    sys.exit(f"sklearn_case: unknown case {case!r} (pca, krr, gpr, ridge)")
print(f"sklearn {case} n {n}: score {score:.9g} fit_s {time.perf_counter() - t0:.3f}")
