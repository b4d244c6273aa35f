#!/usr/bin/env bash
# Builds out/seeds/<target>/ for `cargo afl fuzz -i`: the repository's fixtures in
# each syntax (small ones; AFL wants seeds under 1 MB and runs best on small ones)
# plus corpus/<target>/, which holds hand-made seeds and every crash found so far.
set -euo pipefail
cd "$(dirname "$0")"
rm -rf out/seeds
for target in hocon yaml json jsonl sse; do
    mkdir -p "out/seeds/$target"
    cp "corpus/$target"/* "out/seeds/$target/"
done
copy() { # copy TARGET EXTENSION...
    local target=$1
    shift
    for ext in "$@"; do
        find ../fixtures -type f -name "*.$ext" -size -16k | while read -r f; do
            cp "$f" "out/seeds/$target/$(echo "$f" | tr '/' '_' | sed 's/^\.\._//')"
        done
    done
}
copy hocon hocon conf
copy yaml yaml yml
copy json json
for target in hocon yaml json jsonl sse; do
    echo "$target: $(ls "out/seeds/$target" | wc -l) seeds"
done
