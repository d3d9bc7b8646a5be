! pic_f.f90 -- examples/pic driven from Fortran through the module cnpc writes
! (cnpc --emit=fortran: pic_cnp.f90). The same run as examples/pic/pic_dump.c, which it
! matches bit for bit on the host backend (tests: examples.fortran.pic):
!   pic_f OUT.bin [particles [steps]]
! writes the final state as pic_dump does: live, x, v(:, 1..3), w, rho, E (raw bytes).
program pic_f
  use, intrinsic :: iso_c_binding
  use pic_cnp
  implicit none
  type(pic_config) :: cfg
  type(pic_stats) :: stats
  type(c_ptr) :: p
  character(len=:), allocatable :: errmsg
  character(len=256) :: arg, out
  integer(c_int64_t) :: n, nc, i, k, live
  integer :: steps, s, unit, st
  real(c_double), parameter :: dt = 0.01_c_double, v0 = 0.1_c_double
  real(c_double), parameter :: g = 0.6180339887498949_c_double, h = 0.7548776662466927_c_double
  real(c_double) :: t, u1, total, mean, acc, emean
  real(c_double), pointer :: x(:), v(:, :), w(:), ef(:), rho(:)
  real(c_double), allocatable :: e(:)

  if (command_argument_count() < 1) then
    write (*, '(a)') 'usage: pic_f OUT.bin [particles [steps]]'
    stop 2
  end if
  call get_command_argument(1, out)
  n = 20000
  steps = 40
  nc = 64
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) n
  end if
  if (command_argument_count() >= 3) then
    call get_command_argument(3, arg)
    read (arg, *) steps
  end if

  cfg%N = n
  cfg%n_cells = nc
  cfg%qm = -1.0_c_double
  st = pic_setup(p, cfg, errmsg)
  if (st /= CNP_OK) then
    write (*, '(a)') 'pic_f: setup: ' // errmsg
    stop 1
  end if
  if (pic_backend(p) /= CNP_BACKEND_HOST) error stop 'pic_f: needs the host backend'

  ! Initial state, written straight into the fields: v : f64[3, N] is v(N, 3).
  x => pic_field_x(p)
  v => pic_field_v(p)
  w => pic_field_w(p)
  do i = 1, n
    t = real(i, c_double)
    u1 = frac(t * g)
    x(i) = u1 + 0.01_c_double * u1 * (1.0_c_double - u1)
    if (iand(i - 1, 1_c_int64_t) == 1) then
      v(i, 1) = v0 + 0.01_c_double * (frac(t * h) - 0.5_c_double)
    else
      v(i, 1) = -v0 + 0.01_c_double * (frac(t * h) - 0.5_c_double)
    end if
    v(i, 2) = 0.02_c_double * (frac(t * g * h) - 0.5_c_double)
    v(i, 3) = 0.02_c_double * (frac(t * 0.5_c_double * g) - 0.5_c_double)
    w(i) = 1.0_c_double / real(n, c_double)
  end do

  allocate (e(nc))
  e = 0
  rho => null()
  do s = 1, steps
    ef => pic_field_E(p)
    ef = e
    st = pic_step(p, dt)
    if (st == CNP_OK) st = pic_sync(p)
    if (st /= CNP_OK) then
      write (*, '(a)') 'pic_f: step: ' // pic_status_name(st) // ' (' // pic_error_message(p) // ')'
      stop 1
    end if
    rho => pic_snapshot_out(p, st)
    if (st /= CNP_OK) error stop 'pic_f: snapshot'
    ! The host Gauss solve of pic_demo.c, in the same order (so the same rounding).
    total = 0
    do k = 1, nc
      total = total + rho(k)
    end do
    mean = total / real(nc, c_double)
    acc = 0
    emean = 0
    do k = 1, nc
      acc = acc + (rho(k) - mean)
      e(k) = -4.0_c_double * acc
      emean = emean + e(k) / real(nc, c_double)
    end do
    e = e - emean
  end do

  if (.not. associated(rho)) error stop 'pic_f: no steps'
  live = pic_extent(p, 'N')
  x => pic_field_x(p)
  v => pic_field_v(p)
  w => pic_field_w(p)
  if (size(x, kind=c_int64_t) /= live .or. size(v, 1, kind=c_int64_t) /= live) error stop 'pic_f: live extent'
  open (newunit=unit, file=trim(out), access='stream', form='unformatted', status='replace')
  write (unit) live, x, v(:, 1), v(:, 2), v(:, 3), w, rho, e
  close (unit)
  call pic_stats_get(p, stats)
  write (*, '(a, i0, a, i0, a, i0, a)') 'pic_f: ', live, ' of ', n, ' particles live after ', stats%steps, ' steps'
  if (allocated(errmsg)) deallocate(errmsg)   ! main-program variables are not freed at the end
  deallocate (e)
  call pic_teardown(p)

contains

  pure function frac(y) result(f)
    real(c_double), intent(in) :: y
    real(c_double) :: f
    f = y - aint(y)
  end function frac

end program pic_f
