# FFTW3 for the host FFTs of cnp/grid.h. Sets CNP_HAVE_FFTW (ON/OFF) and CNP_FFTW_LIBS (the
# libraries, full paths, threads libraries first: fftw3_threads fftw3f_threads fftw3 fftw3f).
# Found through pkg-config (fftw3, fftw3f; Debian's libfftw3-dev); the threads libraries have
# no .pc file of their own and are looked for beside them. CNP_WITH_FFTW=OFF builds without
# (runtime/*_nofftw.c then answers CNP_EUNSUPPORTED), ON makes a missing FFTW an error.
set(CNP_HAVE_FFTW OFF)
set(CNP_FFTW_LIBS "")
if(NOT CNP_WITH_FFTW STREQUAL "OFF")
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(CNP_FFTW3 QUIET fftw3 fftw3f)
  endif()
  if(CNP_FFTW3_FOUND)
    find_library(CNP_FFTW3_THREADS_LIB  fftw3_threads  HINTS ${CNP_FFTW3_LIBRARY_DIRS})
    find_library(CNP_FFTW3F_THREADS_LIB fftw3f_threads HINTS ${CNP_FFTW3_LIBRARY_DIRS})
    find_library(CNP_FFTW3_LIB  fftw3  HINTS ${CNP_FFTW3_LIBRARY_DIRS})
    find_library(CNP_FFTW3F_LIB fftw3f HINTS ${CNP_FFTW3_LIBRARY_DIRS})
    find_path(CNP_FFTW3_INCLUDE_DIR fftw3.h HINTS ${CNP_FFTW3_INCLUDE_DIRS})
    if(CNP_FFTW3_THREADS_LIB AND CNP_FFTW3F_THREADS_LIB AND CNP_FFTW3_LIB AND CNP_FFTW3F_LIB
       AND CNP_FFTW3_INCLUDE_DIR)
      set(CNP_HAVE_FFTW ON)
      set(CNP_FFTW_LIBS ${CNP_FFTW3_THREADS_LIB} ${CNP_FFTW3F_THREADS_LIB}
                        ${CNP_FFTW3_LIB} ${CNP_FFTW3F_LIB})
    endif()
  endif()
  if(CNP_WITH_FFTW STREQUAL "ON" AND NOT CNP_HAVE_FFTW)
    message(FATAL_ERROR "CNP_WITH_FFTW=ON but FFTW3 (fftw3, fftw3f and their _threads "
                        "libraries; Debian libfftw3-dev) was not found")
  endif()
endif()
