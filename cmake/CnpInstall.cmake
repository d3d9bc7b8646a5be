# Installation: cnpc, libcnp and libcnp_mpi (static and shared), public headers, pkg-config
# files (cnp.pc, cnp-mpi.pc), CMake package with cnp_add_pipeline(), and a Make fragment for
# plain Makefiles.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CNP_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/cnp)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/cnp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(_cnp_targets cnp cnp_mpi)
if(TARGET cnp_shared)
  list(APPEND _cnp_targets cnp_shared cnp_mpi_shared)
endif()
install(TARGETS ${_cnp_targets} EXPORT cnpTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET cnpc)
  install(TARGETS cnpc EXPORT cnpTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT cnpTargets NAMESPACE cnp:: DESTINATION ${CNP_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cnpConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cnpConfig.cmake INSTALL_DESTINATION ${CNP_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cnpConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cnpConfig.cmake ${PROJECT_BINARY_DIR}/cnpConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/cnpPipeline.cmake
        DESTINATION ${CNP_INSTALL_CMAKEDIR})

# pkg-config: the libraries a static libcnp needs are listed in Libs.private.
set(CNP_PC_PRIVATE "-lm -lpthread -ldl")
# OpenMP: the flags of the compiler libcnp was built with (-fopenmp for gcc and clang), for
# the generated unit (Cflags) and its link (Libs). Empty when OpenMP was not found.
set(CNP_PC_OPENMP "")
if(OpenMP_C_FOUND)
  set(CNP_PC_OPENMP "${OpenMP_C_FLAGS}")
endif()
if(CNP_HAVE_CUDA)
  string(APPEND CNP_PC_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lnvrtc -lcufft -lrt -lstdc++")
endif()
# libcnp needs no MPI; cnp-mpi.pc (libcnp_mpi, the MPI module) requires cnp and, when MPI was
# found, the MPI library's own .pc file.
set(CNP_PC_REQUIRES "")
# FFTW3 (host FFTs): fftw3 and fftw3f have .pc files (Requires.private); their threads
# libraries have none and go in Libs.private, which pkg-config --static puts before them.
if(CNP_HAVE_FFTW)
  set(CNP_PC_REQUIRES "fftw3 fftw3f")
  string(APPEND CNP_PC_PRIVATE " -lfftw3_threads -lfftw3f_threads")
endif()
set(CNP_MPI_PC_REQUIRES "cnp")
set(CNP_MPI_PC_CFLAGS "")
if(CNP_HAVE_MPI)
  string(APPEND CNP_MPI_PC_REQUIRES " mpich")
  set(CNP_MPI_PC_CFLAGS "-DCNP_HAVE_MPI=1")
endif()
# The .pc file finds its prefix relative to where it is installed (relocatable installs).
file(RELATIVE_PATH CNP_PC_UP /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
string(REGEX REPLACE "/$" "" CNP_PC_UP "${CNP_PC_UP}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/cnp.pc.in ${PROJECT_BINARY_DIR}/cnp.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/cnp-mpi.pc.in ${PROJECT_BINARY_DIR}/cnp-mpi.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cnp.pc ${PROJECT_BINARY_DIR}/cnp-mpi.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/cnp.mk DESTINATION ${CMAKE_INSTALL_DATADIR}/cnp)
