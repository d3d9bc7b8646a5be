! test_shapes.f90 -- the Fortran module cnpc writes for shapes.cnp (docs/interfaces.md):
! the index mapping element by element (C F[i0, i1, i2] is Fortran F(i2+1, i1+1, i0+1), the
! same address), before and after a compaction (live extent below capacity: strided views),
! the renamed names (component n_, step argument p_, accessor shapes_field_e_), the element
! kinds, status codes and error texts as Fortran strings, stats and the snapshot.
program test_shapes
  use, intrinsic :: iso_c_binding
  use shapes_cnp
  implicit none
  type(shapes_config) :: cfg
  type(shapes_stats) :: stats
  type(cnp_array) :: view
  type(c_ptr) :: p
  character(len=:), allocatable :: msg
  real(c_double), pointer :: a(:, :, :), big_e(:), sa(:, :, :)
  complex(c_double_complex), pointer :: e(:)
  integer(c_int32_t), pointer :: b(:, :)
  logical(c_bool), pointer :: keep(:)
  integer(c_int16_t), pointer :: hf(:)
  integer(c_int64_t), parameter :: cap = 10, cap2 = 5
  integer(c_int64_t) :: i, j, c, live
  integer(c_int) :: st
  integer :: fails = 0

  cfg%N = cap
  cfg%n_ = cap2
  cfg%z0 = (0.0_c_double, 1.0_c_double)
  cfg%h0 = 1.5_c_float
  st = shapes_setup(p, cfg, msg)
  call check(st == CNP_OK, 'setup: ' // msg)
  if (st /= CNP_OK) stop 1

  a => shapes_field_a(p, st)
  call check(st == CNP_OK .and. associated(a), 'field a')
  call check(all(shape(a) == [cap, 3_c_int64_t, 2_c_int64_t]), 'a : f64[2, 3, N] is a(N, 3, 2)')
  view = shapes_field(p, 'a')
  do c = 0, 1
    do j = 0, 2
      do i = 0, cap - 1
        a(i + 1, j + 1, c + 1) = real(100 * c + 10 * j + i, c_double) - 2.0_c_double
        call check(same_address(a(i + 1, j + 1, c + 1), view, [c, j, i]), 'address of a(i, j, c)')
      end do
    end do
  end do
  b => shapes_field_b(p)
  call check(all(shape(b) == [cap2, 4_c_int64_t]), 'b : i32[4, n] is b(n, 4)')
  do j = 1, 4
    do i = 1, cap2
      b(i, j) = int(10 * j + i, c_int32_t)
    end do
  end do
  big_e => shapes_field_E(p)
  e => shapes_field_e_(p)
  call check(size(big_e) == cap .and. size(e) == cap, 'E and e (renamed shapes_field_e_)')
  big_e = 1.0_c_double
  do i = 1, cap
    e(i) = cmplx(real(i, c_double), 0.0_c_double, c_double_complex)
  end do
  sa => shapes_snapshot_sa(p, st)
  call check(st == CNP_ESTATE .and. .not. associated(sa), 'snapshot before the first copy')

  st = shapes_step(p, 2.0_c_double, 0.5_c_float)
  if (st == CNP_OK) st = shapes_sync(p)
  call check(st == CNP_OK, 'step: ' // shapes_status_name(st) // ' ' // shapes_error_message(p))

  ! a(i, 1, 1) = i - 2 (0-based i): rows 0, 1 and 2 are dropped by the compaction.
  live = shapes_extent(p, 'N')
  call check(live == cap - 3, 'live extent after the compaction')
  a => shapes_field_a(p)
  view = shapes_field(p, 'a')
  call check(all(shape(a) == [live, 3_c_int64_t, 2_c_int64_t]), 'a after the compaction')
  do c = 0, 1
    do j = 0, 2
      do i = 0, live - 1
        call check(same_address(a(i + 1, j + 1, c + 1), view, [c, j, i]), 'address after the compaction')
        if (c == 1 .and. j == 2) then
          call check(a(i + 1, j + 1, c + 1) == (real(10 + i + 3, c_double) - 2.0_c_double) * 2.0_c_double + 0.5_c_double, &
                     'a[1, 2, i] = a[0, 1, i] * s + p')
        else
          call check(a(i + 1, j + 1, c + 1) == real(100 * c + 10 * j + i + 3, c_double) - 2.0_c_double, 'a kept')
        end if
      end do
    end do
  end do
  big_e => shapes_field_E(p)
  e => shapes_field_e_(p)
  keep => shapes_field_keep(p)
  hf => shapes_field_hf(p)
  call check(all(big_e == 2.0_c_double), 'E[i] = E[i] + 1')
  do i = 1, live
    call check(e(i) == cmplx(0.0_c_double, real(i + 3, c_double), c_double_complex), 'e[i] = e[i] * z0')
  end do
  ! keep is not compacted: its first live rows are still those of the map (3 false)
  call check(logical(all(keep .eqv. [(i > 3, i = 1, live)])), 'keep (logical(c_bool))')
  call check(all(hf == int(z'3E00', c_int16_t)), 'hf: the binary16 bits of 1.5')
  b => shapes_field_b(p)
  call check(all(b(:, 4) == b(:, 1) + 1) .and. all(b(:, 2) == [(int(20 + i, c_int32_t), i = 1, cap2)]), 'b[3, j]')
  sa => shapes_snapshot_sa(p, st)
  call check(st == CNP_OK .and. all(shape(sa) == [live, 3_c_int64_t, 2_c_int64_t]), 'snapshot sa')
  if (associated(sa)) call check(all(sa == a), 'snapshot sa = a')

  call shapes_stats_get(p, stats)
  call check(stats%steps == 1, 'stats%steps')
  call check(shapes_set_extent(p, 'N', cap + 1) == CNP_ERANGE, 'set_extent past the capacity')
  call check(shapes_extent(p, 'nope') == -1, 'unknown dim')
  view = shapes_field(p, 'nope')
  call check(.not. c_associated(view%data), 'unknown field')
  call check(shapes_status_name(CNP_ERANGE) == 'CNP_ERANGE', 'status name')
  call check(CNP_EABI == -20 .and. CNP_OK == 0, 'status constants')
  call shapes_teardown(p)

  ! A bad config: the C setup's error text comes back as a Fortran string.
  cfg%N = 0
  st = shapes_setup(p, cfg, msg)
  call check(st /= CNP_OK .and. len(msg) > 0 .and. .not. c_associated(p), 'setup with N = 0 fails with a message')
  if (fails > 0) then
    write (*, '(i0, a)') fails, ' check(s) failed'
    stop 1
  end if
  if (allocated(msg)) deallocate(msg)   ! main-program variables are not freed at the end
  write (*, '(a)') 'test_shapes: ok'

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      fails = fails + 1
      write (*, '(a)') 'FAIL: ' // what
    end if
  end subroutine check

  ! Is x at the address of C element [idx(1), idx(2), ...] of view (strides in bytes)?
  function same_address(x, view, idx) result(ok)
    real(c_double), target, intent(in) :: x
    type(cnp_array), intent(in) :: view
    integer(c_int64_t), intent(in) :: idx(:)
    logical :: ok
    integer(c_intptr_t) :: want
    want = transfer(view%data, want) + sum(idx * view%strides(1:size(idx)))
    ok = transfer(c_loc(x), want) == want
  end function same_address

end program test_shapes
