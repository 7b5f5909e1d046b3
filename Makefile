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

# As root, libmpi.so.12 is registered with the dynamic linker (/etc/ld.so.conf.d/oxmpi.conf), as
# distribution MPIs are, so programs whose build drops mpicc's rpath (rsmpi, some CMake setups)
# still find it. Only a directory holding libmpi.so.12 alone is registered: the prefix's
# libmpich.so.12 link must not take the place of a system MPICH. LDCONFIG=no skips it.
LDCONFIG ?= yes

install: stage
	mkdir -p $(PREFIX)
	cp -a $(STAGE)/. $(PREFIX)/
	@echo "installed into $(PREFIX)"
	@if [ "$(LDCONFIG)" = yes ] && [ "$$(id -u)" -eq 0 ] && [ -d /etc/ld.so.conf.d ]; then \
		mkdir -p $(PREFIX)/lib/ld.so.d && ln -sfn ../libmpi.so.12 $(PREFIX)/lib/ld.so.d/libmpi.so.12 && \
		echo "$$(cd $(PREFIX)/lib/ld.so.d && pwd)" > /etc/ld.so.conf.d/oxmpi.conf && ldconfig && \
		echo "registered $(PREFIX)/lib with the dynamic linker (/etc/ld.so.conf.d/oxmpi.conf)"; \
	else \
		echo "not registered with the dynamic linker (needs root): programs built without mpicc's rpath need LD_LIBRARY_PATH=$(PREFIX)/lib"; \
	fi

bench: stage
	bench/run

clean:
	$(CARGO) clean
