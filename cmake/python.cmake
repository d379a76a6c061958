# The Python module (python/, `make python`): STRAG_PYTHON_MODULE is ON
# when pybind11, the Python headers and an interpreter with NumPy are
# found, and STRAG_BUILD_PYTHON is on. Never under the sanitizers or the
# fuzzers: such a module does not load into a plain python (and the ASan CI
# runs the same ctest).
#
# The interpreter: STRAG_PYTHON_EXECUTABLE when given, else the first of
# `python3` on PATH and /usr/bin/python3 that imports numpy (a pyenv python
# first on PATH may lack it; Debian's python3-numpy is for /usr/bin/python3).
option(STRAG_BUILD_PYTHON "Build the Python module (when pybind11 is found)" ON)
set(STRAG_PYTHON_MODULE OFF)
if(STRAG_BUILD_PYTHON AND NOT STRAG_SANITIZE AND NOT STRAG_BUILD_FUZZERS)
  if(NOT STRAG_PYTHON_EXECUTABLE)
    find_program(STRAG_PATH_PYTHON3 python3)
    foreach(candidate ${STRAG_PATH_PYTHON3} /usr/bin/python3)
      if(NOT EXISTS "${candidate}")
        continue()
      endif()
      execute_process(COMMAND ${candidate} -c "import numpy"
        RESULT_VARIABLE numpy_missing OUTPUT_QUIET ERROR_QUIET)
      if(numpy_missing EQUAL 0)
        set(STRAG_PYTHON_EXECUTABLE ${candidate} CACHE FILEPATH
            "Python interpreter of the strag module (with numpy)")
        break()
      endif()
    endforeach()
  endif()
  if(STRAG_PYTHON_EXECUTABLE)
    set(Python_EXECUTABLE ${STRAG_PYTHON_EXECUTABLE})
    find_package(Python COMPONENTS Interpreter Development.Module QUIET)
    if(Python_FOUND)
      find_package(pybind11 2.6 CONFIG QUIET)
    endif()
  endif()
  if(pybind11_FOUND)
    set(STRAG_PYTHON_MODULE ON)
    message(STATUS "Python module: pybind11 ${pybind11_VERSION}, ${STRAG_PYTHON_EXECUTABLE}")
  else()
    message(STATUS "No Python module (needs pybind11-dev, python3-dev, python3-numpy)")
  endif()
endif()
