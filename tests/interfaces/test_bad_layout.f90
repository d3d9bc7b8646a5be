! test_bad_layout.f90 -- linked with bad_layout.c instead of shapes_cnp_layout.c: the layout
! check of shapes_setup refuses (CNP_EABI, a message naming the sizes, no pipeline).
program test_bad_layout
  use, intrinsic :: iso_c_binding
  use shapes_cnp
  implicit none
  type(shapes_config) :: cfg
  type(c_ptr) :: p
  character(len=:), allocatable :: msg
  integer(c_int) :: st
  cfg%N = 4
  cfg%n_ = 4
  st = shapes_setup(p, cfg, msg)
  write (*, '(a)') msg
  if (st /= CNP_EABI .or. c_associated(p) .or. index(msg, 'regenerate') == 0) then
    write (*, '(a)') 'FAIL: a layout mismatch was not refused'
    stop 1
  end if
  if (allocated(msg)) deallocate(msg)   ! main-program variables are not freed at the end
  write (*, '(a)') 'test_bad_layout: ok'
end program test_bad_layout
