# Installs the build tree into WORK_DIR/prefix, then configures and builds
# the consumer project against it and runs it (ctest: install_consumer).
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${WORK_DIR}/prefix
  RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
# A sanitized library (NEURALSIM_SANITIZE) links only into sanitized programs.
set(flags)
if(SANITIZE)
  set(flags -DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build
  -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix ${flags} RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "configuring the consumer against the installed NeuralSim failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "building the consumer failed (${rc})")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer ${SOURCE_DIR}/configs/models/pendulum.yaml
  RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(rc OR NOT out MATCHES "energy drift")
  message(FATAL_ERROR "the consumer did not run (${rc}): ${out}")
endif()
string(REGEX MATCH "energy drift ([-+0-9.e]+)" _ "${out}")
if(NOT CMAKE_MATCH_1 OR CMAKE_MATCH_1 GREATER 1e-6 OR CMAKE_MATCH_1 LESS -1e-6)
  message(FATAL_ERROR "the consumer's pendulum did not conserve energy: ${out}")
endif()
message(STATUS "consumer: ${out}")
