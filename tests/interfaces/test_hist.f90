! test_hist.f90 -- the scalar and history accessors of the Fortran module (docs/interfaces.md,
! "Scalars and histories") on python/tests/hist.cnp: each step adds 1 to every x and records
! total = sum(x) into a ring of K entries. hist_scalar_total and hist_history_totals copy
! (cnp_array_copy), so they are the header's hist_scalar and hist_history for Fortran.
program test_hist
  use, intrinsic :: iso_c_binding
  use hist_cnp
  implicit none
  type(hist_config) :: cfg
  type(c_ptr) :: p
  character(len=:), allocatable :: msg
  real(c_double), pointer :: x(:)
  real(c_double) :: h(8), total
  integer(c_int64_t), parameter :: n = 6, k = 5
  integer(c_int64_t) :: i, got
  integer(c_int) :: st
  integer :: s, fails = 0

  cfg%N = n
  cfg%K = k
  st = hist_setup(p, cfg, msg)
  call check(st == CNP_OK, 'setup: ' // msg)
  if (st /= CNP_OK) stop 1
  x => hist_field_x(p)
  do i = 1, n
    x(i) = real(i - 1, c_double)                      ! x0 = 0, 1, ..., n - 1
  end do
  got = hist_history_totals(p, h)
  call check(got == 0, 'nothing recorded before the first step')
  do s = 1, 3
    call check(hist_step(p) == CNP_OK, 'step')
  end do
  call check(hist_sync(p) == CNP_OK, 'sync')
  total = hist_scalar_total(p, st)
  call check(st == CNP_OK .and. total == expected(3), 'scalar total after 3 steps')
  got = hist_history_totals(p, h)
  call check(got == 3, 'three values recorded')
  do s = 1, 3
    call check(h(s) == expected(s), 'history before the ring wraps, oldest first')
  end do
  do s = 4, 12                                         ! 12 records into 5 entries
    call check(hist_step(p) == CNP_OK, 'step')
  end do
  call check(hist_sync(p) == CNP_OK, 'sync')
  got = hist_history_totals(p, h)
  call check(got == k, 'the ring keeps K values')
  do s = 1, int(k)
    call check(h(s) == expected(12 - int(k) + s), 'the latest K values, oldest first')
  end do
  got = hist_history_totals(p, h(1:2))
  call check(got == 2 .and. h(1) == expected(11) .and. h(2) == expected(12), 'a shorter buffer: the latest')
  call check(hist_scalar_total(p) == expected(12), 'scalar total after 12 steps')
  call hist_teardown(p)
  if (allocated(msg)) deallocate(msg)   ! main-program variables are not freed at the end
  if (fails > 0) stop 1
  print '(a)', 'test_hist: ok'

contains

  ! total after step s: sum(x0) + n s
  real(c_double) function expected(s2)
    integer, intent(in) :: s2
    expected = real(n * (n - 1) / 2 + n * s2, c_double)
  end function expected

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(2a)', 'FAIL: ', what
      fails = fails + 1
    end if
  end subroutine check
end program test_hist
