# es2d_lang.cmake -- sets CNP_ES2D_CNP: ON when cnpc's sources have the grid language that
# examples/pic2d/es2d.cnp uses (deposit/gather: ST_DEPOSIT, fft/ifft: ST_FFT in cnpc.h;
# wave(): compiler/gen_fft.c), so that the generated 2D step is built as soon as all of it is
# in the tree and the tree builds before. A transitional check (the grid language lands in
# three branches); -DCNP_WITH_ES2D_CNP=ON/OFF overrides it. Included by tests/physics,
# examples and bench/pic2d.
set(_es2d_h ${PROJECT_SOURCE_DIR}/compiler/cnpc.h)
set(_es2d_fft ${PROJECT_SOURCE_DIR}/compiler/gen_fft.c)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_es2d_h})
set(CNP_ES2D_CNP OFF)
if(EXISTS ${_es2d_h} AND EXISTS ${_es2d_fft})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_es2d_fft})
  file(READ ${_es2d_h} _es2d_src)
  file(READ ${_es2d_fft} _es2d_fsrc)
  if(_es2d_src MATCHES "ST_DEPOSIT" AND _es2d_src MATCHES "ST_FFT" AND _es2d_fsrc MATCHES "wave")
    set(CNP_ES2D_CNP ON)
  endif()
endif()
if(DEFINED CNP_WITH_ES2D_CNP)
  set(CNP_ES2D_CNP ${CNP_WITH_ES2D_CNP})
endif()
