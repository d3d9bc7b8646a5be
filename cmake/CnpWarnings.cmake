# Warning and sanitizer flags for our own targets (never for generated third-party code).
set(CNP_C_WARNINGS -Wall -Wextra -Werror -Wno-unused-parameter)
set(CNP_SAN_FLAGS "")
if(CNP_SANITIZE)
  set(CNP_SAN_FLAGS -fsanitize=${CNP_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${CNP_SAN_FLAGS}>")
  add_link_options(${CNP_SAN_FLAGS})
endif()

# cnp_target_warnings(target): -Wall -Wextra -Werror for C sources of a target.
function(cnp_target_warnings tgt)
  target_compile_options(${tgt} PRIVATE $<$<COMPILE_LANGUAGE:C>:${CNP_C_WARNINGS}>)
endfunction()
