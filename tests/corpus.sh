# corpus.sh — where the shell tests find models (sourced after tap.sh), so that a fresh
# clone runs every test and ../shared, when present, adds its bigger models:
#  SHARED         the shared folder: $GL_SHARED, else ../shared beside the source tree
#  TREE_MODELS    the in-tree corpus: small models shaped like the shared ones, made by
#                 tests/data/make_models.py; always there
#  SHARED_MODELS  $SHARED/models, when present
#  Each holds NAME/model.onnx, NAME/test_data_set_0/ and NAME/info.json. Every model:
#      for dir in "$TREE_MODELS"/*/ "$SHARED_MODELS"/*/; do
#          [ -f "$dir/model.onnx" ] || continue   # (the glob of an absent folder)
#  CONFORMANCE    the ONNX node conformance cases: $SHARED/conformance/node when present,
#                 else those `make check` made in the build folder from the installed
#                 onnx (tests/data/make_conformance.py); empty when neither is there,
#                 NO_CONFORMANCE then says why (the tests skip with it)
SHARED="${GL_SHARED:-$GL_SRCDIR/../shared}"
TREE_MODELS="$GL_SRCDIR/tests/data/models"
SHARED_MODELS="$SHARED/models"
CONFORMANCE=""
for _d in "$SHARED/conformance/node" "$GL_BUILDDIR/tests/conformance/node"; do
    if [ -d "$_d" ]; then
        CONFORMANCE=$_d
        break
    fi
done
NO_CONFORMANCE="no conformance cases: no $SHARED/conformance/node, none made in the build (python with onnx: ${GL_PYTHON:-none})"

# model_dir NAME: the folder of model NAME, in-tree first; fails when there is none.
model_dir() {
    for _d in "$TREE_MODELS/$1" "$SHARED_MODELS/$1"; do
        if [ -f "$_d/model.onnx" ]; then
            echo "$_d"
            return 0
        fi
    done
    return 1
}

# info_number DIR KEY: the number after the first "KEY": in DIR/info.json (nothing
# when absent).
info_number() {
    sed -n "s/^ *\"$2\": *\([0-9]*\).*/\1/p" "$1/info.json" 2>/dev/null | head -n 1
}
