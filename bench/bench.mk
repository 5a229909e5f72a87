# bench programs and targets (included from Makefile.am).
# `make bench` builds them, and so does `make check` (Makefile.am puts them in check_PROGRAMS,
# never in TESTS) so that a change that breaks one fails the build. bench/run.sh drives them.
BENCH_PROGS = bench/bench_load bench/bench_toposort bench/bench_pipeline bench/bench_run \
	bench/bench_transpose bench/bench_ui_graph bench/bench_render bench/bench_ui_keys \
	bench/bench_dnnl_threads bench/bench_dnnl_layout bench/bench_quant

bench_bench_load_SOURCES = bench/bench_load.c bench/benchutil.h
bench_bench_load_CFLAGS = $(AM_CFLAGS)
bench_bench_load_LDADD = $(GL_LIBS)

bench_bench_toposort_SOURCES = bench/bench_toposort.c bench/benchutil.h
bench_bench_toposort_CFLAGS = $(AM_CFLAGS)
bench_bench_toposort_LDADD = $(GL_LIBS)

bench_bench_pipeline_SOURCES = bench/bench_pipeline.c bench/benchutil.h
bench_bench_pipeline_CFLAGS = $(AM_CFLAGS)
bench_bench_pipeline_LDADD = $(GL_LIBS)

bench_bench_run_SOURCES = bench/bench_run.c bench/benchutil.h
bench_bench_run_CFLAGS = $(AM_CFLAGS)
bench_bench_run_LDADD = $(GL_LIBS)

bench_bench_transpose_SOURCES = bench/bench_transpose.c bench/benchutil.h
bench_bench_transpose_CFLAGS = $(AM_CFLAGS)
bench_bench_transpose_LDADD = $(GL_LIBS)

bench_bench_ui_graph_SOURCES = bench/bench_ui_graph.c bench/benchutil.h
bench_bench_ui_graph_CFLAGS = $(AM_CFLAGS)
bench_bench_ui_graph_LDADD = $(GL_LIBS)

bench_bench_render_SOURCES = bench/bench_render.c bench/benchutil.h
bench_bench_render_CFLAGS = $(AM_CFLAGS)
bench_bench_render_LDADD = $(GL_LIBS)
bench_bench_ui_keys_SOURCES = bench/bench_ui_keys.c bench/benchutil.h
bench_bench_ui_keys_CFLAGS = $(AM_CFLAGS)
bench_bench_ui_keys_LDADD = $(GL_LIBS)

bench_bench_dnnl_threads_SOURCES = bench/bench_dnnl_threads.c bench/bench_dnnl.h bench/benchutil.h
bench_bench_dnnl_threads_CFLAGS = $(AM_CFLAGS)
bench_bench_dnnl_threads_LDADD = $(DNNL_LIBS)

bench_bench_dnnl_layout_SOURCES = bench/bench_dnnl_layout.c bench/bench_dnnl.h bench/benchutil.h
bench_bench_dnnl_layout_CFLAGS = $(AM_CFLAGS)
bench_bench_dnnl_layout_LDADD = $(DNNL_LIBS)

bench_bench_quant_SOURCES = bench/bench_quant.c bench/benchutil.h
bench_bench_quant_CFLAGS = $(AM_CFLAGS)
bench_bench_quant_LDADD = $(GL_LIBS)

# The generated onnx.pb-c.h must exist before the first compile (BUILT_SOURCES are only
# made by all/check/install, not by this target).
bench: $(BUILT_SOURCES)
	$(MAKE) $(AM_MAKEFLAGS) $(BENCH_PROGS)
.PHONY: bench

# Distributed without touching EXTRA_DIST (Makefile.am sets it after this include).
dist_noinst_SCRIPTS = bench/make_big_models.py bench/make_densenet.py bench/run.sh bench/run_big_graph.sh bench/vs_ort.sh \
	bench/erf_fit.py bench/weights_held_once.sh \
	bench/ort_time.js bench/trace_nodes.js
