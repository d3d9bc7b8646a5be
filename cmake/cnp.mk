# cnp.mk — Make fragment for plain Makefiles. Usage:
#   include $(shell pkg-config --variable=prefix cnp)/share/cnp/cnp.mk
#   CFLAGS += $(CNP_CFLAGS)
#   app: main.o pic.o ; $(CC) -o $@ $^ $(CNP_LIBS)
#   main.o: pic.h
# (an MPI pipeline: $(CNP_MPI_CFLAGS) and $(CNP_MPI_LIBS), below)
# A pattern rule turns NAME.cnp into NAME.h + NAME.c with cnpc (named after the file: -o $*,
# even where its `pipeline` has another name, which still prefixes the API's symbols).
# cnpc rewrites an output only when its content changes, so the rule's real target is a stamp (NAME.cnp.stamp) and the
# depfile cnpc writes (-MD) names every imported .cnp and kernel file: touching an import
# reruns cnpc, and only changed outputs make their objects rebuild.
# CNP_CFLAGS carries the OpenMP flag (the generated loops are `#pragma omp`: without it they
# compile, silently, to one thread) and CNP_LIBS an rpath to the installed lib directory (the
# program runs without LD_LIBRARY_PATH). Both come from cnp.pc.
CNP_PKG    ?= cnp
ifeq ($(shell pkg-config --exists $(CNP_PKG) && echo yes),)
$(error cnp.mk: pkg-config does not find '$(CNP_PKG)': set PKG_CONFIG_PATH=<prefix>/lib/pkgconfig)
endif
CNPC       ?= $(shell pkg-config --variable=cnpc $(CNP_PKG))
CNP_CFLAGS ?= $(shell pkg-config --cflags $(CNP_PKG))
CNP_LIBS   ?= $(shell pkg-config --libs --static $(CNP_PKG))
CNPC_FLAGS ?=
# An MPI pipeline (an `mpi` declaration, `exchange` or `migrate`) also needs the MPI module,
# libcnp_mpi, and MPI: link it with $(CNP_MPI_LIBS) instead of $(CNP_LIBS) and compile with
# $(CNP_MPI_CFLAGS) (cnp-mpi.pc, which requires cnp and MPI; evaluated only where used).
# Programs without MPI keep $(CNP_LIBS) and get no MPI library, statically or not.
CNP_MPI_PKG    ?= cnp-mpi
CNP_MPI_CFLAGS ?= $(shell pkg-config --cflags $(CNP_MPI_PKG))
CNP_MPI_LIBS   ?= $(shell pkg-config --libs --static $(CNP_MPI_PKG))
ifeq ($(strip $(shell pkg-config --variable=openmp $(CNP_PKG))),)
$(warning cnp.mk: this cnp was built without OpenMP: generated pipelines run on one thread)
endif
# What cnpc writes: add ,fortran for NAME_cnp.f90 + NAME_cnp_layout.c (the Fortran module and
# its layout check) or ,cxx for NAME.hpp (the C++17 wrapper); docs/interfaces.md.
CNP_EMIT   ?= header,c

%.cnp.stamp: %.cnp
	$(CNPC) $(CNPC_FLAGS) --emit=$(CNP_EMIT) -o $* -MD -MF $*.cnp.d -MT $@ -MP $<
	@touch $@

# A do-nothing recipe, not an empty one: GNU make re-reads the mtimes after running a recipe,
# so objects rebuild exactly when cnpc really rewrote a file.
%.c %.h: %.cnp.stamp
	@:
%_cnp.f90 %_cnp_layout.c: %.cnp.stamp
	@:
%.hpp: %.cnp.stamp
	@:
.PRECIOUS: %.cnp.stamp

# The depfiles name targets; keep them from becoming the Makefile's default goal.
cnp__goal := $(.DEFAULT_GOAL)
-include $(wildcard *.cnp.d)
.DEFAULT_GOAL := $(cnp__goal)
