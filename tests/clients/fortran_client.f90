! A gfortran client: dgemm, zgemm, dsyevd (workspace query first), dgesv and dpotrf (one positive
! definite matrix, one that is not), with character arguments written out in words, as Fortran code
! does: gfortran passes each one's length as a hidden argument, which the library must forward.
! Every result element is printed as the hex of its bits; every call is followed by a line
! "@call SYMBOL M N K QUERY INFO ROW_MAJOR" (see blas_client.c), which the test matches with the trace.
program fortran_client
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  integer, parameter :: m = 13, n = 11, k = 9, lda = 16, ldb = 12, ldc = 15
  integer, parameter :: ns = 17, lds = 19, nrhs = 3
  real(dp) :: a(lda, 16), b(ldb, 16), c(ldc, 16)
  complex(dp) :: za(lda, 16), zb(ldb, 16), zc(ldc, 16)
  real(dp) :: s(lds, ns), h(lds, ns), w(ns), rhs(lds, nrhs), wq(1)
  real(dp), allocatable :: work(:)
  integer, allocatable :: iwork(:)
  integer :: ipiv(ns), iq(1), info, lwork, liwork, i, j, l
  integer :: seed

  seed = 12345
  call fill(a, size(a))
  call fill(b, size(b))
  call fill(c, size(c))

  call dgemm('No transpose', 'Transpose', m, n, k, 1.5_dp, a, lda, b, ldb, -0.75_dp, c, ldc)
  call expect('dgemm_', m, n, k, 0, 0)
  call pr('dgemm NT c', c, size(c))
  call dgemm('transpose', 'n', m, n, k, 0.5_dp, a, lda, b, ldb, 1.0_dp, c, ldc)
  call expect('dgemm_', m, n, k, 0, 0)
  call pr('dgemm TN c', c, size(c))

  call zfill(za, size(za))
  call zfill(zb, size(zb))
  call zfill(zc, size(zc))
  call zgemm('Conjugate transpose', 'No transpose', m, n, k, (1.0_dp, -0.5_dp), za, lda, zb, ldb, &
             (0.25_dp, 0.0_dp), zc, ldc)
  call expect('zgemm_', m, n, k, 0, 0)
  call zpr('zgemm CN c', zc, size(zc))

  ! a symmetric matrix for dsyevd, a general one for dgesv
  call fill(s, size(s))
  ! The rows past ns (ld gap) must stay as they are: set them, or they would hold whatever the
  ! stack held before the program started, which differs with the library's start-up work.
  h = -7.0_dp
  do j = 1, ns
    do i = 1, j
      h(i, j) = s(i, j) + s(j, i)
      h(j, i) = h(i, j)
    end do
  end do
  call dsyevd('Vectors', 'Upper', ns, h, lds, w, wq, -1, iq, -1, info)
  call expect('dsyevd_', ns, ns, 0, 1, info)
  call pr('dsyevd query', wq, 1)
  lwork = int(wq(1))
  liwork = iq(1)
  allocate (work(lwork), iwork(liwork))
  call dsyevd('Vectors', 'Upper', ns, h, lds, w, work, lwork, iwork, liwork, info)
  call expect('dsyevd_', ns, ns, 0, 0, info)
  call pr('dsyevd w', w, ns)
  call pr('dsyevd a', h, size(h))
  print '(A,I0)', 'info dsyevd = ', info
  deallocate (work, iwork)

  call fill(rhs, size(rhs))
  h = s
  call dgesv(ns, nrhs, h, lds, ipiv, rhs, lds, info)
  call expect('dgesv_', ns, ns, nrhs, 0, info)
  call pr('dgesv a', h, size(h))
  call pr('dgesv b', rhs, size(rhs))
  print '(A,17(1X,I0))', 'dgesv ipiv', ipiv
  print '(A,I0)', 'info dgesv = ', info

  ! s' s + n I is positive definite
  do j = 1, ns
    do i = 1, ns
      h(i, j) = 0
      do l = 1, ns
        h(i, j) = h(i, j) + s(l, i) * s(l, j)
      end do
    end do
    h(j, j) = h(j, j) + ns
  end do
  call dpotrf('Lower', ns, h, lds, info)
  call expect('dpotrf_', ns, ns, 0, 0, info)
  call pr('dpotrf a', h, size(h))
  print '(A,I0)', 'info dpotrf = ', info
  ! and s' s - 4 n I is not
  do j = 1, ns
    do i = 1, ns
      h(i, j) = 0
      do l = 1, ns
        h(i, j) = h(i, j) + s(l, i) * s(l, j)
      end do
    end do
    h(j, j) = h(j, j) - 4 * ns
  end do
  call dpotrf('Upper', ns, h, lds, info)
  call expect('dpotrf_', ns, ns, 0, 0, info)
  call pr('dpotrf indefinite a', h, size(h))
  print '(A,I0)', 'info dpotrf indefinite = ', info
  print '(A)', 'done'

contains

  real(dp) function rnd()
    seed = mod(seed * 1103 + 12345, 1000003)
    rnd = real(mod(seed, 2001) - 1000, dp) / 256.0_dp
  end function rnd

  subroutine fill(x, cnt)
    integer, intent(in) :: cnt
    real(dp), intent(out) :: x(cnt)
    integer :: q
    do q = 1, cnt
      x(q) = rnd()
    end do
  end subroutine fill

  subroutine zfill(x, cnt)
    integer, intent(in) :: cnt
    complex(dp), intent(out) :: x(cnt)
    integer :: q
    real(dp) :: re, im
    do q = 1, cnt
      re = rnd()
      im = rnd()
      x(q) = cmplx(re, im, kind=dp)
    end do
  end subroutine zfill

  subroutine pr(what, x, cnt)
    character(*), intent(in) :: what
    integer, intent(in) :: cnt
    real(dp), intent(in) :: x(cnt)
    integer :: q
    do q = 1, cnt
      print '(A,1X,I0,1X,Z16.16)', what, q, transfer(x(q), 0_8)
    end do
  end subroutine pr

  subroutine zpr(what, x, cnt)
    character(*), intent(in) :: what
    integer, intent(in) :: cnt
    complex(dp), intent(in) :: x(cnt)
    integer :: q
    do q = 1, cnt
      print '(A,1X,I0,2(1X,Z16.16))', what, q, transfer(real(x(q), dp), 0_8), transfer(aimag(x(q)), 0_8)
    end do
  end subroutine zpr

  subroutine expect(sym, mm, nn, kk, q, inf)
    character(*), intent(in) :: sym
    integer, intent(in) :: mm, nn, kk, q, inf
    print '(A,A,6(1X,I0))', '@call ', sym, mm, nn, kk, q, inf, 0
  end subroutine expect

end program fortran_client
