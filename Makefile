# strag: the two-command quick start is `make demo` and `make test`.
BUILD_DIR ?= build
ASAN_DIR ?= build-asan
JOBS ?= 2
CMAKE_FLAGS ?=

PREFIX ?= /usr/local

.PHONY: all deps deps-build configure build build-all python demo test test-asan fuzz update-golden bench bench-accuracy bench-plan install format clean

all: build

# Everything (tests, benchmarks, fuzzing) / only what building strag needs.
deps:
	@./scripts/install-deps.sh --all

deps-build:
	@./scripts/install-deps.sh --build

# The developer and CI builds treat warnings as errors (a plain cmake build
# does not).
$(BUILD_DIR)/build.ninja: | deps-build
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DSTRAG_WERROR=ON $(CMAKE_FLAGS)

configure: $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target strag

# Everything, tests and benchmarks included: installs their dependencies
# too, and configures again so that a build made without them (make build)
# gains them.
build-all: deps configure
	cmake -S . -B $(BUILD_DIR) >/dev/null
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The Python module (python/README.md) into $(BUILD_DIR)/python:
# PYTHONPATH=$(BUILD_DIR)/python python3 -c 'import strag'. Needs pybind11,
# the Python headers and NumPy (make deps); make build does not.
python: configure
	cmake -S . -B $(BUILD_DIR) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target strag_python || { \
	  echo "make python: no Python module: install pybind11-dev python3-dev python3-numpy (make deps)"; \
	  exit 1; }

# The motivating example: a 4,096-GPU hybrid-parallel job with a 20%-slow
# GPU, simulated, then analysed (docs/formats/sim-spec.md).
demo: build
	./$(BUILD_DIR)/strag simulate --preset article-hybrid-4096 --analyze

test: build-all
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# The same tests under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: deps
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DSTRAG_SANITIZE=ON -DSTRAG_BUILD_BENCH=OFF -DSTRAG_WERROR=ON $(CMAKE_FLAGS)
	cmake --build $(ASAN_DIR) -j $(JOBS)
	ctest --test-dir $(ASAN_DIR) --output-on-failure -j $(JOBS)

# Every libFuzzer target (the readers, the spec parser and simulator) for
# FUZZ_SECONDS each under ASan + UBSan with 2 GB memory caps, over the seed
# corpora of tests/fuzz/make_corpus.py (clang).
FUZZ_SECONDS ?= 60
fuzz: deps
	./scripts/fuzz.sh $(FUZZ_SECONDS)

# Rewrites the golden outputs (tests/golden/*.txt) after a deliberate change.
update-golden: build-all
	STRAG_UPDATE_GOLDEN=1 python3 tests/cli/cli_test.py ./$(BUILD_DIR)/strag . ../shared/data
	STRAG_UPDATE_GOLDEN=1 python3 tests/cli/plan_test.py ./$(BUILD_DIR)/strag . ../shared/data

bench: build-all
	./$(BUILD_DIR)/bench/strag_bench

# Simulated twins (ops CSV vs Kineto export of 40 random jobs), then real
# PyTorch jobs with a known straggler, each analysed in both trace layouts,
# 3 runs each; rewrites docs/accuracy.md (bench/accuracy/README.md).
bench-accuracy: build
	/usr/bin/python3 bench/accuracy/score.py ./$(BUILD_DIR)/strag --reruns 3
	python3 bench/accuracy/sim_twins.py ./$(BUILD_DIR)/strag --random 40 \
	  --doc docs/accuracy.md || true

# The planner's predictions against the simulator running each fix;
# rewrites the table of docs/plan.md (bench/plan/plan_truth.py).
bench-plan: build
	python3 bench/plan/plan_truth.py ./$(BUILD_DIR)/strag --check --doc docs/plan.md

# The binary, the Python agent and the docs under PREFIX (default
# /usr/local): PREFIX/bin/strag, PREFIX/share/strag/agents/python, ...
install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

format:
	find src tests bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
