# Run at build time (python/CMakeLists.txt): the registry's settings as JSON, from the tool itself
# (`gpu-offload help settings --machine`), so that the package's list is the C++ table's.
execute_process(COMMAND "${EXE}" help settings --machine OUTPUT_FILE "${OUT}.tmp" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} help settings --machine failed: ${rc}")
endif()
file(RENAME "${OUT}.tmp" "${OUT}")
