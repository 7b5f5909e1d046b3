# oxmpi front door.
#   make            build everything, stage target/oxmpi/{bin,include,lib}, run the C and Rust examples on 4 ranks
#   make test       the whole test suite (Rust unit/integration tests, C conformance suite, ABI and failure tests)
#   make install PREFIX=/opt/oxmpi
#   make bench      compare with MPICH and Open MPI (see bench/README.md)

PREFIX ?= /usr/local
STAGE  := target/oxmpi
CARGO  ?= cargo
NP     ?= 4

.PHONY: all build stage examples test test-rust test-c install bench clean

all: examples

build:
	$(CARGO) build --release --workspace --all-targets

stage: build
	scripts/stage target/release $(STAGE)

examples: stage
	mkdir -p target/examples
	$(STAGE)/bin/mpicc -O2 -Wall examples/c/hello.c -o target/examples/hello-c
	@echo "== C example on $(NP) ranks"
	$(STAGE)/bin/mpiexec -n $(NP) target/examples/hello-c
	@echo "== Rust example on $(NP) ranks"
	$(STAGE)/bin/mpiexec -n $(NP) target/release/examples/hello

test: stage
	scripts/test-all

install: stage
	mkdir -p $(PREFIX)
	cp -a $(STAGE)/. $(PREFIX)/
	@echo "installed into $(PREFIX)"

bench: stage
	bench/run

clean:
	$(CARGO) clean
