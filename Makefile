# Thin wrapper over CMake.  `make demo` and `make check` are the two
# set-up commands of the README; both install missing Debian packages
# when run as root.
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps configure build demo check check-sanitize fuzz cuda-resources compute-sanitizer clean

all: build

deps:
	@./scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@./scripts/demo.sh $(BUILD)

check: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The whole suite under AddressSanitizer + UBSan (Debug, CPU only).
check-sanitize: deps
	cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DRICOCHET_CUDA=OFF -DRICOCHET_SANITIZE=ON
	cmake --build build-sanitize -j $(JOBS)
	cd build-sanitize && ctest --output-on-failure -j $(JOBS)

# libFuzzer harnesses of tests/fuzz (scenario loader, --set, XYZ reader),
# built with clang, ASan and UBSan in build-fuzz and run FUZZ_SECONDS each;
# fails if any finds a crash (the input is kept in build-fuzz/artifacts).
FUZZ_SECONDS ?= 60
fuzz: deps
	@./scripts/fuzz.sh $(FUZZ_SECONDS)

# ptxas register/stack/spill report of every CUDA kernel (needs nvcc only).
cuda-resources:
	@./scripts/cuda-resources.sh

# The gpu-labelled tests under compute-sanitizer memcheck, initcheck,
# synccheck and (for kernels with shared memory) racecheck, logged to
# bench/results/compute_sanitizer.txt (skipped, with a message, without a
# device or compute-sanitizer; failed when a device is unusable).
compute-sanitizer: build
	@./scripts/compute-sanitizer.sh $(BUILD)

clean:
	rm -rf $(BUILD) build-sanitize build-fuzz
