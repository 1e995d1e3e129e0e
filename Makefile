# ./train: a transformer trainer in plain C with OpenMP.
#   make            build ./train
#   make check      the quick loop (under a minute): unit tests and the fast shell
#                   checks, without the sanitizer, mutant and PyTorch builds
#   make test       unit tests, CLI tests, sanitizer build, PyTorch cross-check
#   make demo       train the default demo, trace one review through it, predict two
#   make build/train-ref  ./train on the plain layers of nn/reference.c, to step through (docs/READING.md)
#   make docs       regenerate the excerpts and claims of README.md and docs/*.md, and docs/images, from real runs
#   make bench      speed against PyTorch and the machine's matmul peak
#   make data       build the real datasets from Debian packages
#   make check-data long runs on the real data (CI runs it)
#   make fuzz       fuzz the parsers (FUZZ_SECONDS per target)

CC      ?= cc
# MPI (data-parallel training, run/dist.c): on when $(MPICC) is on PATH and CC was
# not given; `make MPI=0` forces the plain build, `make MPI=1` insists on MPI.
MPICC   ?= mpicc
ifndef MPI
  MPI   := $(if $(and $(filter default,$(origin CC)),$(shell command -v $(MPICC) 2>/dev/null)),1,0)
endif
ifeq ($(MPI),1)
  CC    := $(MPICC)
endif
PYTHON  ?= /usr/bin/python3
BUILD   := build
CSTD    := -std=c11 -D_GNU_SOURCE
WARN    := -Wall -Wextra
# -mprefer-vector-width=512: on Intel's AVX-512 cores -march=native tunes for 256-bit vectors, and the float32
# kernel's 8 x 32 tile then spills (half its speed); the width changes no number (each output is one chain over k)
NATIVE  := $(shell printf 'int main(void){return 0;}' | $(CC) -march=native -x c - -o /dev/null 2>/dev/null && echo -march=native)
WIDE    := $(if $(NATIVE),$(shell printf 'int main(void){return 0;}' | \
             $(CC) -march=native -mprefer-vector-width=512 -x c - -o /dev/null 2>/dev/null && echo -mprefer-vector-width=512))
OPT     ?= -O3 -fno-math-errno $(NATIVE) $(WIDE)
CFLAGS  ?=
LDLIBS  := -lm

# OpenMP: used when the compiler accepts it; otherwise a single-threaded build.
OPENMP := $(shell printf 'int main(void){return 0;}' | $(CC) -fopenmp -x c - -o /dev/null 2>/dev/null && echo -fopenmp)

# stb_image_write/stb_truetype/stb_easy_font: pkg-config stb, /usr/include/stb, or Debian's
# libstb-dev unpacked without root into $(BUILD)/stb.
STB_LOCAL := $(BUILD)/stb/usr/include/stb
STB_CFLAGS := $(shell pkg-config --cflags stb 2>/dev/null)
ifeq ($(STB_CFLAGS),)
  ifneq ($(wildcard /usr/include/stb/stb_image_write.h),)
    STB_CFLAGS := -I/usr/include/stb
  else
    STB_CFLAGS := -I$(STB_LOCAL)
    STB_DEP := $(STB_LOCAL)/stb_image_write.h
  endif
endif

# Text in the PNGs: this TrueType font (Debian's fonts-dejavu-core), unless
# the environment variable TRAIN_FONT names another at run time; when the
# file is missing, fontconfig's DejaVu Sans; when nothing is found, the
# built-in ASCII bitmap font.
FONT ?= /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
FONT_DEFS := -DFONT_PATH='"$(FONT)"'

# Commands are shown as one short line each; `make V=1` prints them whole.
Q := $(if $(V),,@)
ALL_CFLAGS := $(CSTD) -I. $(WARN) $(OPT) $(OPENMP) $(STB_CFLAGS) $(CFLAGS)
ASAN_CFLAGS := $(CSTD) -I. $(WARN) -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
               -fno-sanitize-recover=undefined $(OPENMP) $(STB_CFLAGS) $(CFLAGS)

# run.json records the version (the release in run/record.c, with git describe
# when git is there) and the flags of this build.
GIT_VERSION := $(shell git describe --always --dirty 2>/dev/null)
VERSION_DEFS := $(if $(GIT_VERSION),-DTRAIN_GIT='"$(GIT_VERSION)"') -DTRAIN_CFLAGS='"$(strip $(CSTD) $(OPT) $(OPENMP) $(CFLAGS))"'

# The layers, lowest first (docs/ARCHITECTURE.md): each folder includes only
# its own headers and those of folders before it; tests/test_layers.sh checks.
LAYERS   := base formats nn model text report run cli
LIB_SRC  := model.c $(foreach d,$(LAYERS),$(wildcard $(d)/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
ASAN_OBJ := $(LIB_SRC:%.c=$(BUILD)/asan/%.o)
HEADERS  := $(wildcard *.h) $(foreach d,$(LAYERS),$(wildcard $(d)/*.h))
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
ASAN_TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/asan-tests/%)
TOOL_SRC := $(wildcard tests/tool_*.c)
TOOL_BIN := $(TOOL_SRC:tests/%.c=$(BUILD)/tests/%)

.PHONY: FORCE synthetic all check test check-torch demo docs bench data check-data fuzz clean
all: train

$(STB_LOCAL)/stb_image_write.h:
	@echo "stb headers not installed; fetching Debian's libstb-dev into $(BUILD)/stb (no root needed)"
	@mkdir -p $(BUILD)/stb
	@cd $(BUILD)/stb && apt-get download libstb-dev >/dev/null 2>&1 && dpkg-deb -x libstb-dev_*.deb . \
	  || { echo "error: could not get stb. Install it with: apt-get install -y libstb-dev" >&2; exit 1; }

# Third-party stb implementation compiled on its own, without our warnings.
$(BUILD)/obj/report/stb_impl.o $(BUILD)/asan/report/stb_impl.o: report/stb_impl.c $(STB_DEP)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CSTD) -O2 -w $(STB_CFLAGS) -c $< -o $@

# Rebuilt when the version or flags change.
$(BUILD)/version-stamp: FORCE
	@mkdir -p $(@D)
	@echo '$(VERSION_DEFS)' | cmp -s - $@ || echo '$(VERSION_DEFS)' > $@
$(BUILD)/obj/run/record.o $(BUILD)/asan/run/record.o: $(BUILD)/version-stamp
$(BUILD)/obj/run/record.o: ALL_CFLAGS += $(VERSION_DEFS)
$(BUILD)/asan/run/record.o: ASAN_CFLAGS += $(VERSION_DEFS)
FORCE:

# report/font.c is rebuilt when FONT changes.
$(BUILD)/obj/report/font.o: ALL_CFLAGS += $(FONT_DEFS)
$(BUILD)/asan/report/font.o: ASAN_CFLAGS += $(FONT_DEFS)
$(BUILD)/obj/report/font.o $(BUILD)/asan/report/font.o: $(BUILD)/font-stamp
$(BUILD)/font-stamp: FORCE
	@mkdir -p $(@D)
	@echo '$(FONT_DEFS)' | cmp -s - $@ || echo '$(FONT_DEFS)' > $@

# The layers' loops: no FP exception is read there, so gcc may turn a float
# condition around a product into a vector select (without AVX-512's masks
# it keeps such loops scalar). Not for the whole program: the flag also lets
# gcc fold (float)(int)x into truncf (-0 on (-1, 0)); these files have no
# such round trip, and their checkpoints keep their bytes.
$(BUILD)/obj/nn/layers.o $(BUILD)/obj/nn/attention.o: ALL_CFLAGS += -fno-trapping-math

# Only run/dist.c speaks MPI; it is rebuilt when MPI is switched on or off.
MPI_DEFS := $(if $(filter 1,$(MPI)),-DUSE_MPI)
$(BUILD)/obj/run/dist.o: ALL_CFLAGS += $(MPI_DEFS)
$(BUILD)/asan/run/dist.o: ASAN_CFLAGS += $(MPI_DEFS)
$(BUILD)/obj/run/dist.o $(BUILD)/asan/run/dist.o: $(BUILD)/mpi-stamp
$(BUILD)/mpi-stamp: FORCE
	@mkdir -p $(@D)
	@echo 'MPI=$(MPI) CC=$(CC)' | cmp -s - $@ || echo 'MPI=$(MPI) CC=$(CC)' > $@

$(BUILD)/obj/%.o: %.c $(HEADERS) $(STB_DEP)
	@mkdir -p $(@D)
	@$(if $(V),,echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/asan/%.o: %.c $(HEADERS) $(STB_DEP)
	@mkdir -p $(@D)
	@$(if $(V),,echo "  CC asan $<")
	$(Q)$(CC) $(ASAN_CFLAGS) -c $< -o $@

# model/f64.c compiles model.c, nn/layers.c and nn/attention.c again with float meaning double
# (trace --backward's live gradient check); objcopy makes all its symbols but
# model_f64_probe local, so they do not clash with the float model's.
OBJCOPY ?= objcopy
F64_GLOBAL := --keep-global-symbol=model_f64_probe
$(BUILD)/obj/model/f64.o: model/f64.c model.c model/config.c nn/layers.c nn/attention.c $(HEADERS)
	@mkdir -p $(@D)
	@$(if $(V),,echo "  CC f64  $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@.tmp && $(OBJCOPY) $(F64_GLOBAL) $@.tmp $@ && rm -f $@.tmp

$(BUILD)/asan/model/f64.o: model/f64.c model.c model/config.c nn/layers.c nn/attention.c $(HEADERS)
	@mkdir -p $(@D)
	@$(if $(V),,echo "  CC asan $<")
	$(Q)$(CC) $(ASAN_CFLAGS) -c $< -o $@.tmp && $(OBJCOPY) $(F64_GLOBAL) $@.tmp $@ && rm -f $@.tmp

# A ./train with one wrong sign planted in LayerNorm's backward (a sed-mutated
# copy of nn/layers.c, in both the float and the double build): trace
# --backward's gradient check must fail with it (tests/test_teaching.sh).
# Nothing of it reaches ./train.
MUTANT := $(BUILD)/mutant
MUTANT_OBJ := $(filter-out $(BUILD)/obj/nn/layers.o $(BUILD)/obj/model/f64.o,$(LIB_OBJ)) \
              $(MUTANT)/nn/layers.o $(MUTANT)/model/f64.o
$(MUTANT)/nn/layers.c: nn/layers.c
	@mkdir -p $(@D)
	$(Q)sed 's/dx\[c\] = start + rs \* (g - g_mean - xhat \* gx_mean);/dx[c] = start + rs * (g + g_mean - xhat * gx_mean);/' $< >$@.tmp
	$(Q)if cmp -s $< $@.tmp; then echo "error: the planted sign no longer applies to nn/layers.c: update the sed in the Makefile" >&2; \
	    rm -f $@.tmp; exit 1; fi
	$(Q)mv $@.tmp $@

$(MUTANT)/nn/layers.o: $(MUTANT)/nn/layers.c $(HEADERS)
	@$(if $(V),,echo "  CC      $< (wrong sign planted)")
	$(Q)$(CC) -I$(MUTANT) $(ALL_CFLAGS) -c $< -o $@

$(MUTANT)/model/f64.o: model/f64.c model.c model/config.c $(MUTANT)/nn/layers.c nn/attention.c $(HEADERS)
	@mkdir -p $(@D)
	@$(if $(V),,echo "  CC f64  $< (wrong sign planted)")
	$(Q)$(CC) -I$(MUTANT) $(ALL_CFLAGS) -c $< -o $@.tmp && $(OBJCOPY) $(F64_GLOBAL) $@.tmp $@ && rm -f $@.tmp

$(MUTANT)/train: train.c $(MUTANT_OBJ) $(HEADERS)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) train.c $(MUTANT_OBJ) -o $@ $(LDLIBS)

# build/train-ref: ./train on the plain reference layers (nn/reference.c, bound
# by nn/reference_bind.h where model.c and model/optimizer.c are compiled with
# -DTRAIN_REFERENCE), unoptimised with debug symbols, for stepping through a
# training in a debugger; tests/test_reference_run.sh compares its losses with
# ./train's. Nothing of it reaches ./train.
REF := $(BUILD)/ref
REF_CFLAGS := $(CSTD) -I. $(WARN) -Og -g $(OPENMP) $(STB_CFLAGS) $(CFLAGS)
# trace --backward's double model and the stb code are the optimised build's
REF_OBJ := $(filter-out $(REF)/model/f64.o $(REF)/report/stb_impl.o,$(LIB_SRC:%.c=$(REF)/%.o)) \
           $(BUILD)/obj/model/f64.o $(BUILD)/obj/report/stb_impl.o
$(REF)/model.o $(REF)/model/optimizer.o: REF_CFLAGS += -DTRAIN_REFERENCE
$(REF)/run/record.o: REF_CFLAGS += $(if $(GIT_VERSION),-DTRAIN_GIT='"$(GIT_VERSION)"') \
                                   -DTRAIN_CFLAGS='"$(strip $(CSTD) -Og -g -DTRAIN_REFERENCE $(OPENMP) $(CFLAGS))"'
$(REF)/report/font.o: REF_CFLAGS += $(FONT_DEFS)
$(REF)/run/dist.o: REF_CFLAGS += $(MPI_DEFS)
$(REF)/run/record.o: $(BUILD)/version-stamp
$(REF)/report/font.o: $(BUILD)/font-stamp
$(REF)/run/dist.o: $(BUILD)/mpi-stamp

$(REF)/%.o: %.c $(HEADERS) $(STB_DEP)
	@mkdir -p $(@D)
	@$(if $(V),,echo "  CC ref  $<")
	$(Q)$(CC) $(REF_CFLAGS) -c $< -o $@

$(BUILD)/train-ref: train.c $(REF_OBJ) $(HEADERS)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(REF_CFLAGS) train.c $(REF_OBJ) -o $@ $(LDLIBS)

train: train.c $(LIB_OBJ) $(HEADERS)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) train.c $(LIB_OBJ) -o $@ $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(LIB_OBJ) $(HEADERS) tests/check.h
	@mkdir -p $(@D)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -I. $< $(LIB_OBJ) -o $@ $(LDLIBS)

# test_f64_* compile the model's sources themselves in double precision.
$(BUILD)/tests/test_f64_%: tests/test_f64_%.c model.c model/config.c nn/layers.c nn/attention.c nn/mlm.c base/errors.c $(HEADERS) tests/check.h
	@mkdir -p $(@D)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -I. $< -o $@ $(LDLIBS)

$(BUILD)/asan-tests/test_f64_%: tests/test_f64_%.c model.c model/config.c nn/layers.c nn/attention.c nn/mlm.c base/errors.c $(HEADERS) tests/check.h
	@mkdir -p $(@D)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(ASAN_CFLAGS) -I. $< -o $@ $(LDLIBS)

$(BUILD)/asan-tests/%: tests/%.c $(ASAN_OBJ) $(HEADERS) tests/check.h
	@mkdir -p $(@D)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(ASAN_CFLAGS) -I. $< $(ASAN_OBJ) -o $@ $(LDLIBS)

$(BUILD)/train-asan: train.c $(ASAN_OBJ) $(HEADERS)
	@$(if $(V),,echo "  LD      $@")
	$(Q)$(CC) $(ASAN_CFLAGS) train.c $(ASAN_OBJ) -o $@ $(LDLIBS)

test: train $(TEST_BIN) $(TOOL_BIN) $(ASAN_TEST_BIN) $(BUILD)/train-asan $(MUTANT)/train $(BUILD)/train-ref
	@bash scripts/run-tests.sh

# The edit-build-test loop: the plain unit tests (no ASan, mutant or twin builds)
# and the shell checks that need no training (scripts/run-tests.sh --quick).
check: train $(TEST_BIN)
	@bash scripts/run-tests.sh --quick

check-torch: $(BUILD)/tests/tool_torch_check
	@bash scripts/check-torch.sh

demo: train
	@bash scripts/demo.sh

docs: train
	@bash scripts/docs.sh

bench: train $(BUILD)/tests/tool_bench $(BUILD)/tests/tool_bpe_bench $(BUILD)/tests/tool_allreduce $(BUILD)/tests/tool_amx
	@bash scripts/bench.sh
	@bash scripts/bpe_bench.sh

data:
	@bash scripts/get-data.sh

synthetic:
	@bash scripts/make-synthetic.sh

check-data: train
	@bash scripts/check-data.sh

fuzz:
	@bash scripts/fuzz.sh

clean:
	rm -rf $(BUILD) train
