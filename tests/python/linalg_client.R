# An R program for the integration tests: %*%, crossprod, solve, chol, svd, eigen on fixed random
# inputs of ~200, every result written in full binary precision to the file named by the first argument.
# Each call has its own sizes so the test can tell the calls apart in the trace.
args <- commandArgs(trailingOnly = TRUE)
out <- file(args[1], "wb")
put <- function(name, x) {
  writeBin(name, out)
  writeBin(as.integer(length(x)), out)
  writeBin(as.double(x), out)
}
set.seed(20261129)
mat <- function(m, n) matrix(rnorm(m * n), m, n)

a <- mat(211, 173); b <- mat(173, 157)
put("matmul", a %*% b)                       # dgemm 211 x 157 x 173
x <- mat(223, 191)
put("crossprod", crossprod(x))               # dsyrk n=191 k=223
s <- mat(229, 229); rhs <- mat(229, 7)
put("solve", solve(s, rhs))                  # dgesv n=229 nrhs=7
p <- crossprod(mat(260, 233)) + diag(233)    # (dsyrk n=233 k=260)
put("chol", chol(p))                         # dpotrf n=233
v <- mat(241, 197)
sv <- svd(v)                                 # dgesdd 241 x 197
put("svd_d", sv$d); put("svd_u", sv$u); put("svd_v", sv$v)
y <- mat(251, 251); y <- (y + t(y)) / 2
e <- eigen(y, symmetric = TRUE)              # dsyevr n=251
put("eigen_sym_values", e$values); put("eigen_sym_vectors", e$vectors)
g <- mat(263, 263)
eg <- eigen(g)                               # dgeev n=263
put("eigen_gen_re", Re(eg$values)); put("eigen_gen_im", Im(eg$values))
put("eigen_gen_vre", Re(eg$vectors)); put("eigen_gen_vim", Im(eg$vectors))
close(out)
