# cnp_add_pipeline(<target> <file.cnp> [BACKEND host|cuda] [NAME base] [OUTPUT_DIR dir]
#                  [IMPORT_DIRS dir...] [CNPC_FLAGS ...])
#
# Runs cnpc on <file.cnp> at build time (re-running when the .cnp file, anything it imports
# or any kernel file it names changes: cnpc writes a gcc-style depfile), then adds the
# generated backend source (NAME.c for host, NAME.cu for CUDA) and NAME.h to <target> and
# links libcnp. The generated header directory is added to the target's include path.
# NAME is the pipeline's name, as with cnpc itself (`pipeline pic_step;` in foo.cnp gives
# pic_step.h and pic_step.c), read from the file at configure time (a change to the file
# reconfigures); NAME base overrides it (cnpc -o).
function(cnp_add_pipeline tgt file)
  cmake_parse_arguments(P "" "BACKEND;OUTPUT_DIR;NAME" "IMPORT_DIRS;CNPC_FLAGS" ${ARGN})
  if(NOT P_BACKEND)
    set(P_BACKEND host)
  endif()
  get_filename_component(src ${file} ABSOLUTE)
  if(P_NAME)
    set(name ${P_NAME})
  else()
    if(NOT EXISTS ${src})
      message(FATAL_ERROR "cnp_add_pipeline: ${file} does not exist")
    endif()
    # `pipeline NAME;` outside comments (# to the end of the line) and strings.
    file(READ ${src} text)
    string(REGEX REPLACE "\"[^\"\n]*\"" "\"\"" text "${text}")
    string(REGEX REPLACE "#[^\n]*" "" text "${text}")
    if(NOT text MATCHES "(^|[^A-Za-z0-9_])pipeline[ \t\r\n]+([A-Za-z_][A-Za-z0-9_]*)[ \t\r\n]*;")
      message(FATAL_ERROR "cnp_add_pipeline: no 'pipeline NAME;' in ${file} (pass NAME <base>)")
    endif()
    set(name ${CMAKE_MATCH_2})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})
  endif()
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
    COMMAND ${cnpc} --emit=${emit} -o ${P_OUTPUT_DIR}/${name} ${incs} ${P_CNPC_FLAGS}
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
