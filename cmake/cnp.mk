# cnp.mk — Make fragment for plain Makefiles. Usage:
#   include $(shell pkg-config --variable=prefix cnp)/share/cnp/cnp.mk
#   app: app.o pic.o ; $(CC) -o $@ $^ $(CNP_LIBS)
# A pattern rule turns NAME.cnp into NAME.h + NAME.c with cnpc and includes the depfiles cnpc
# writes, so editing an imported .cnp or a kernel file regenerates exactly what depends on it.
CNP_PKG    ?= cnp
CNPC       ?= $(shell pkg-config --variable=cnpc $(CNP_PKG))
CNP_CFLAGS ?= $(shell pkg-config --cflags $(CNP_PKG))
CNP_LIBS   ?= $(shell pkg-config --libs --static $(CNP_PKG))
CNPC_FLAGS ?=

%.c %.h: %.cnp
	$(CNPC) $(CNPC_FLAGS) --emit=header,c --out-dir $(or $(patsubst %/,%,$(dir $@)),.) -MD -MF $*.cnp.d -MT $*.c -MP $<

-include $(wildcard *.cnp.d)
