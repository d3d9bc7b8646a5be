# cnp.mk — Make fragment for plain Makefiles. Usage:
#   include $(shell pkg-config --variable=prefix cnp)/share/cnp/cnp.mk
#   app: main.o pic.o ; $(CC) -o $@ $^ $(CNP_LIBS)
#   main.o: pic.h
# A pattern rule turns NAME.cnp into NAME.h + NAME.c with cnpc (named after the file: -o $*,
# even where its `pipeline` has another name, which still prefixes the API's symbols).
# cnpc rewrites an output only when its content changes, so the rule's real target is a stamp (NAME.cnp.stamp) and the
# depfile cnpc writes (-MD) names every imported .cnp and kernel file: touching an import
# reruns cnpc, and only changed outputs make their objects rebuild.
CNP_PKG    ?= cnp
CNPC       ?= $(shell pkg-config --variable=cnpc $(CNP_PKG))
CNP_CFLAGS ?= $(shell pkg-config --cflags $(CNP_PKG))
CNP_LIBS   ?= $(shell pkg-config --libs --static $(CNP_PKG))
CNPC_FLAGS ?=
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
