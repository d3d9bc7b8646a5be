# cnp_add_pipeline(<target> <file.cnp> [BACKEND host|cuda] [IMPORT_DIRS dir...] [CNPC_FLAGS ...])
#
# Runs cnpc on <file.cnp> at build time (re-running when the .cnp file, anything it imports
# or any kernel file it names changes: cnpc writes a gcc-style depfile), then adds the
# generated backend source (NAME.c for host, NAME.cu for CUDA) and NAME.h to <target> and
# links libcnp. The generated header directory is added to the target's include path.
function(cnp_add_pipeline tgt file)
  cmake_parse_arguments(P "" "BACKEND;OUTPUT_DIR" "IMPORT_DIRS;CNPC_FLAGS" ${ARGN})
  if(NOT P_BACKEND)
    set(P_BACKEND host)
  endif()
  get_filename_component(src ${file} ABSOLUTE)
  get_filename_component(name ${file} NAME_WE)
  if(NOT P_OUTPUT_DIR)
    set(P_OUTPUT_DIR ${CMAKE_CURRENT_BINARY_DIR}/cnp_${name})
  endif()
  if(TARGET cnp::cnpc)
    set(cnpc $<TARGET_FILE:cnp::cnpc>)
  elseif(TARGET cnpc)
    set(cnpc $<TARGET_FILE:cnpc>)
    set(cnpc_dep cnpc)    # in-tree cnpc: regenerate when the compiler changes
  else()
    message(FATAL_ERROR "cnp_add_pipeline: no cnpc target")
  endif()
  if(P_BACKEND STREQUAL "cuda")
    set(gen ${P_OUTPUT_DIR}/${name}.cu)
    set(emit header,cuda)
  else()
    set(gen ${P_OUTPUT_DIR}/${name}.c)
    set(emit header,c)
  endif()
  set(incs "")
  foreach(d ${P_IMPORT_DIRS})
    list(APPEND incs -I ${d})
  endforeach()
  file(MAKE_DIRECTORY ${P_OUTPUT_DIR})
  add_custom_command(
    OUTPUT ${P_OUTPUT_DIR}/${name}.h ${gen}
    COMMAND ${cnpc} --emit=${emit} --out-dir ${P_OUTPUT_DIR} ${incs} ${P_CNPC_FLAGS}
            -MD -MF ${P_OUTPUT_DIR}/${name}.d -MT ${gen} ${src}
    DEPENDS ${src} ${cnpc_dep}
    DEPFILE ${P_OUTPUT_DIR}/${name}.d
    COMMENT "cnpc ${file}"
    VERBATIM)
  target_sources(${tgt} PRIVATE ${gen} ${P_OUTPUT_DIR}/${name}.h)
  target_include_directories(${tgt} PRIVATE ${P_OUTPUT_DIR})
  if(TARGET cnp::cnp)
    target_link_libraries(${tgt} PRIVATE cnp::cnp)
  else()
    target_link_libraries(${tgt} PRIVATE cnp)
  endif()
endfunction()
