# strag_cc_library(NAME name SRCS ... DEPS ...): one library per folder,
# exposed as strag::name; DEPS is the explicit list of what it may use.
function(strag_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(strag_${ARG_NAME} STATIC ${ARG_SRCS})
  add_library(strag::${ARG_NAME} ALIAS strag_${ARG_NAME})
  target_include_directories(strag_${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(strag_${ARG_NAME} PUBLIC ${ARG_DEPS})
endfunction()

# strag_cc_test(NAME name SRCS ... DEPS ...): a GoogleTest binary registered
# with CTest; tests sit next to the code they test.
function(strag_cc_test)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest_main)
  target_compile_definitions(${ARG_NAME} PRIVATE
    STRAG_SHARED_DATA_DIR="${STRAG_SHARED_DATA_DIR}"
    STRAG_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  gtest_discover_tests(${ARG_NAME} DISCOVERY_TIMEOUT 60)
endfunction()
