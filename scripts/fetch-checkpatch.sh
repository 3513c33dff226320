#!/bin/bash
# Fetch the Linux kernel's scripts/checkpatch.pl (with the files it reads)
# from Debian's linux-source-6.12 and print the folder that holds
# scripts/checkpatch.pl.
#
#   scripts/fetch-checkpatch.sh
#
# Only those few files are kept, in $PVDC_CACHE/linux-checkpatch/VERSION.
# The package's tarball is read from /usr/src when linux-source-6.12 of the
# newest version is installed, else downloaded (about 150 MB) and dropped
# once the files are out.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
help_and_exit_if_asked "$@"

PKG=linux-source-6.12
FILES=(scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch
       Documentation/dev-tools/checkpatch.rst)

version=$(apt-cache policy "$PKG" 2>/dev/null | sed -n 's/^ *Candidate: //p')
[ -n "$version" ] && [ "$version" != "(none)" ] ||
    die "no $PKG in apt (run scripts/setup-host.sh)"
dir=$PVDC_CACHE/linux-checkpatch/$version
mkdir -p "$PVDC_CACHE/linux-checkpatch"
exec 9>"$PVDC_CACHE/linux-checkpatch/.lock"
flock 9

if [ ! -f "$dir/.ready" ]; then
    rm -rf "$dir" "$dir.tmp"
    mkdir -p "$dir.tmp"
    tarball=/usr/src/$PKG.tar.xz
    if [ "$(dpkg-query -W -f='${Version}' "$PKG" 2>/dev/null || true)" != "$version" ] ||
       [ ! -f "$tarball" ]; then
        stage "downloading $PKG $version (about 150 MB)" >&2
        (cd "$dir.tmp" && apt-get download -q -o APT::Sandbox::User=root "$PKG=$version" >&2)
        dpkg-deb --fsys-tarfile "$dir.tmp"/"$PKG"_*.deb |
            tar -xO "./usr/src/$PKG.tar.xz" >"$dir.tmp/source.tar.xz"
        rm -f "$dir.tmp"/"$PKG"_*.deb
        tarball=$dir.tmp/source.tar.xz
    fi
    stage "extracting checkpatch.pl from $PKG $version" >&2
    tar -xJf "$tarball" -C "$dir.tmp" --strip-components=1 \
        "${FILES[@]/#/$PKG/}"
    rm -f "$dir.tmp/source.tar.xz"
    touch "$dir.tmp/.ready"
    mv "$dir.tmp" "$dir"
fi
echo "$dir"
