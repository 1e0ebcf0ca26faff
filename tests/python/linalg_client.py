"""A NumPy/SciPy program for the integration tests: every high-level call the tests look for, on fixed
random inputs, results saved to the .npz file named by argv[1].

Every call has its own sizes, so the test can tell the calls apart in the trace by their dimensions
(CALLS below, imported by test_numpy_scipy.py, says which call has which sizes)."""

import sys

# name: shape parameters. The test reads this table; keep every size distinct and above ~100.
CALLS = {
    "matmul_f64": (211, 157, 173),       # (m, n, k): (m, k) @ (k, n)
    "matmul_f32": (191, 149, 167),
    "matmul_c128": (181, 139, 163),
    "matmul_aat": (205, 187),            # (n, k): a @ a.T with a (n, k)
    "matvec_f64": (347, 251),            # (m, n): (m, n) @ (n,)
    "matvec_c128_strided": (349, 257),   # (m, n): (m, n) @ x[::2], x of 2n elements
    "np_solve": (223, 7),                # (n, nrhs)
    "np_inv": (229,),
    "np_det": (233,),
    "np_slogdet": (239,),
    "np_eigh": (241,),
    "np_eig": (251,),
    "np_svd": (263, 197),                # (m, n)
    "np_svdvals": (269, 181),            # svd(compute_uv=False)
    "np_cholesky": (271,),
    "np_qr": (277, 193),
    "np_lstsq": (283, 179, 5),           # (m, n, nrhs)
    "np_pinv": (293, 211),
    "sp_svd": (307, 223),
    "sp_eigh": (311,),
    "sp_solve": (313, 9),
    "sp_lu_factor": (317,),
    "sp_cholesky": (331,),
    "sp_inv": (337,),
}


def main(out):
    import numpy as np  # here, so the test can read CALLS where numpy is missing and skip
    import scipy.linalg as sla

    rng = np.random.default_rng(20261129)

    def mat(m, n, dtype=np.float64):
        a = rng.standard_normal((m, n))
        if np.issubdtype(dtype, np.complexfloating):
            a = a + 1j * rng.standard_normal((m, n))
        return a.astype(dtype)

    def spd(n):
        a = mat(n, n)
        return a @ a.T + n * np.eye(n)

    def sym(n):
        a = mat(n, n)
        return (a + a.T) / 2

    r = {}
    m, n, k = CALLS["matmul_f64"]
    r["matmul_f64"] = mat(m, k) @ mat(k, n)
    m, n, k = CALLS["matmul_f32"]
    r["matmul_f32"] = mat(m, k, np.float32) @ mat(k, n, np.float32)
    m, n, k = CALLS["matmul_c128"]
    r["matmul_c128"] = mat(m, k, np.complex128) @ mat(k, n, np.complex128)
    n, k = CALLS["matmul_aat"]
    a = mat(n, k)
    r["matmul_aat"] = a @ a.T
    m, n = CALLS["matvec_f64"]
    r["matvec_f64"] = mat(m, n) @ mat(n, 1)[:, 0]
    m, n = CALLS["matvec_c128_strided"]
    r["matvec_c128_strided"] = mat(m, n, np.complex128) @ mat(2 * n, 1, np.complex128)[::2, 0]

    # Inputs for the LAPACK calls are made before any of them, so the matmuls that build them
    # (spd) come first in the trace and cannot be mistaken for the calls under test.
    n, nrhs = CALLS["np_solve"]
    solve_in = (mat(n, n), mat(n, nrhs))
    inv_in = mat(*CALLS["np_inv"] * 2)
    det_in = mat(*CALLS["np_det"] * 2)
    slogdet_in = mat(*CALLS["np_slogdet"] * 2)
    eigh_in = sym(*CALLS["np_eigh"])
    eig_in = mat(*CALLS["np_eig"] * 2)
    svd_in = mat(*CALLS["np_svd"])
    svdvals_in = mat(*CALLS["np_svdvals"])
    chol_in = spd(*CALLS["np_cholesky"])
    qr_in = mat(*CALLS["np_qr"])
    m, n, nrhs = CALLS["np_lstsq"]
    lstsq_in = (mat(m, n), mat(m, nrhs))
    pinv_in = mat(*CALLS["np_pinv"])
    sp_svd_in = mat(*CALLS["sp_svd"])
    sp_eigh_in = sym(*CALLS["sp_eigh"])
    n, nrhs = CALLS["sp_solve"]
    sp_solve_in = (mat(n, n), mat(n, nrhs))
    sp_lu_in = mat(*CALLS["sp_lu_factor"] * 2)
    sp_chol_in = spd(*CALLS["sp_cholesky"])
    sp_inv_in = mat(*CALLS["sp_inv"] * 2)

    la = np.linalg
    r["np_solve"] = la.solve(*solve_in)
    r["np_inv"] = la.inv(inv_in)
    r["np_det"] = np.asarray(la.det(det_in))
    sign, logdet = la.slogdet(slogdet_in)
    r["np_slogdet_sign"], r["np_slogdet_logdet"] = np.asarray(sign), np.asarray(logdet)
    r["np_eigh_w"], r["np_eigh_v"] = la.eigh(eigh_in)
    r["np_eig_w"], r["np_eig_v"] = la.eig(eig_in)
    r["np_svd_u"], r["np_svd_s"], r["np_svd_vh"] = la.svd(svd_in)
    r["np_svdvals"] = la.svd(svdvals_in, compute_uv=False)
    r["np_cholesky"] = la.cholesky(chol_in)
    r["np_qr_q"], r["np_qr_r"] = la.qr(qr_in)
    x, res, rank, s = la.lstsq(*lstsq_in, rcond=None)
    r["np_lstsq_x"], r["np_lstsq_res"], r["np_lstsq_rank"], r["np_lstsq_s"] = x, res, np.asarray(rank), s
    r["np_pinv"] = la.pinv(pinv_in)

    r["sp_svd_u"], r["sp_svd_s"], r["sp_svd_vh"] = sla.svd(sp_svd_in)
    r["sp_eigh_w"], r["sp_eigh_v"] = sla.eigh(sp_eigh_in)
    r["sp_solve"] = sla.solve(*sp_solve_in)
    r["sp_lu"], r["sp_piv"] = sla.lu_factor(sp_lu_in)
    r["sp_cholesky"] = sla.cholesky(sp_chol_in)
    r["sp_inv"] = sla.inv(sp_inv_in)

    np.savez(out, **r)


if __name__ == "__main__":
    main(sys.argv[1])
