# cmake -DREF="cmd;args" -DGOT="cmd;args" -DREF_OUT=a.bin -DGOT_OUT=b.bin -P run_compare.cmake
# Runs the reference driver and the driver under test (each writes its dump file) and fails
# unless both succeed and the dumps are byte for byte the same (docs/interfaces.md).
foreach(v REF GOT)
  execute_process(COMMAND ${${v}} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${${v}}: exit status ${rc}")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${REF_OUT} ${GOT_OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GOT_OUT} differs from the C driver's ${REF_OUT}")
endif()
message(STATUS "identical: ${REF_OUT} ${GOT_OUT}")
