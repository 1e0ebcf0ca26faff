! FFTW's legacy Fortran interface: plans made with dfftw_plan_* / sfftw_plan_*, executed with
! dfftw_execute, dfftw_execute_dft, dfftw_execute_dft_r2c and the single-precision versions.
! Prints the results bitwise (Z format) so a run under the library can be compared exactly.
program fortran_fftw
  implicit none
  include 'fftw3.f'
  integer, parameter :: n = 96
  integer*8 :: plan, rplan, splan
  complex*16 :: zin(n), zout(n), zout2(n)
  double precision :: din(n)
  complex*16 :: dhalf(n / 2 + 1)
  complex :: cin(n), cout(n)
  integer :: i
  do i = 1, n
    zin(i) = dcmplx(sin(0.1d0 * i), cos(0.3d0 * i))
    din(i) = cos(0.2d0 * i) + 0.5d0
    cin(i) = cmplx(real(i) / n, -real(i) / (2 * n))
  end do
  call dfftw_plan_dft_1d(plan, n, zin, zout, FFTW_FORWARD, FFTW_ESTIMATE)
  call dfftw_execute(plan)
  call dfftw_execute_dft(plan, zin, zout2)
  call dfftw_destroy_plan(plan)
  call dfftw_plan_dft_r2c_1d(rplan, n, din, dhalf, FFTW_ESTIMATE)
  call dfftw_execute_dft_r2c(rplan, din, dhalf)
  call dfftw_destroy_plan(rplan)
  call sfftw_plan_dft_1d(splan, n, cin, cout, FFTW_BACKWARD, FFTW_ESTIMATE)
  call sfftw_execute(splan)
  call sfftw_destroy_plan(splan)
  write (*, '(4Z20)') zout
  write (*, '(4Z20)') zout2
  write (*, '(4Z20)') dhalf
  write (*, '(4Z12)') cout
end program fortran_fftw
