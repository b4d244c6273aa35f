#!/usr/bin/env bash
# Installs a pinned Prill release: the archive for this machine from the release's
# assets, checked against the release's sha256 file, unpacked into PRILL_INSTALL_DIR.
# Used by the GitHub Action (action.yml); tested against a release folder served on
# 127.0.0.1 by .ci/release.
#
#   PRILL_VERSION       the release, as 0.1.0 (a leading v is dropped); required
#   PRILL_INSTALL_DIR   where `prill` goes (default ~/.prill/bin); kept when it already
#                       holds that version (the Action caches this folder)
#   PRILL_RELEASES_URL  where releases are downloaded from, as <base>/v<version>/<file>
#                       (default https://github.com/prill-dev/prill/releases/download)
#   PRILL_TARGET        the target triple to install (default: this machine's)
#
# With GITHUB_PATH set (in a GitHub Actions step), the folder is put on PATH for the
# later steps. Exit 0 once `prill --version` of the installed binary says the version.
set -euo pipefail

say() { echo "install-prill: $*" >&2; }
die() {
  say "error: $*"
  exit 1
}

version="${PRILL_VERSION:-}"
version="${version#v}"
[ -n "$version" ] || die "PRILL_VERSION is not set (a release, as 0.1.0)"
base="${PRILL_RELEASES_URL:-https://github.com/prill-dev/prill/releases/download}"
base="${base%/}"
dir="${PRILL_INSTALL_DIR:-$HOME/.prill/bin}"
# Windows runners hand over C:\... paths; Git Bash's tools want /c/...
if command -v cygpath >/dev/null 2>&1; then dir="$(cygpath -u "$dir")"; fi

target="${PRILL_TARGET:-}"
if [ -z "$target" ]; then
  os="$(uname -s)"
  arch="$(uname -m)"
  case "$arch" in
    x86_64 | amd64 | AMD64) arch=x86_64 ;;
    aarch64 | arm64 | ARM64) arch=aarch64 ;;
    *) die "no Prill release for the processor $arch (x86_64 and aarch64 only)" ;;
  esac
  case "$os" in
    Linux) target="$arch-unknown-linux-musl" ;;
    Darwin) target="$arch-apple-darwin" ;;
    MINGW* | MSYS* | CYGWIN* | Windows_NT)
      [ "$arch" = x86_64 ] || die "no Prill release for Windows on $arch (x86_64 only)"
      target="x86_64-pc-windows-msvc"
      ;;
    *) die "no Prill release for $os" ;;
  esac
fi
case "$target" in
  *-windows-*) archive="prill-cli-$target.zip" exe=prill.exe ;;
  *) archive="prill-cli-$target.tar.gz" exe=prill ;;
esac

# The version a binary reports ("prill 0.1.0"), or nothing.
version_of() { "$1" --version 2>/dev/null | awk 'NR == 1 { print $2 }' || true; }

if [ -x "$dir/$exe" ] && [ "$(version_of "$dir/$exe")" = "$version" ]; then
  say "prill $version is already in $dir (cached)"
else
  command -v curl >/dev/null 2>&1 || die "curl is needed to download the release"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  url="$base/v$version/$archive"
  say "downloading $url"
  curl --fail --location --silent --show-error --retry 3 -o "$tmp/$archive" "$url" \
    || die "could not download $url (is $version a Prill release with a build for $target?)"
  curl --fail --location --silent --show-error --retry 3 -o "$tmp/$archive.sha256" "$url.sha256" \
    || die "could not download $url.sha256"

  # The sha256 file is "<hex>  <name>" (or "<hex> *<name>"): only the hex counts.
  expected="$(awk 'NR == 1 { print tolower($1) }' "$tmp/$archive.sha256")"
  if command -v sha256sum >/dev/null 2>&1; then
    actual="$(sha256sum "$tmp/$archive" | awk '{ print $1 }')"
  elif command -v shasum >/dev/null 2>&1; then
    actual="$(shasum -a 256 "$tmp/$archive" | awk '{ print $1 }')"
  else
    die "sha256sum or shasum is needed to check the download"
  fi
  case "$expected" in
    [0-9a-f]*) [ "${#expected}" -eq 64 ] || die "$archive.sha256 holds no sha256: $expected" ;;
    *) die "$archive.sha256 holds no sha256: $expected" ;;
  esac
  [ "$actual" = "$expected" ] \
    || die "the checksum of $archive is $actual, but the release says $expected: not installed"
  say "checksum ok: $actual"

  mkdir -p "$tmp/unpacked"
  case "$archive" in
    *.zip)
      if command -v unzip >/dev/null 2>&1; then
        unzip -q "$tmp/$archive" -d "$tmp/unpacked"
      elif command -v 7z >/dev/null 2>&1; then
        7z x -y -o"$tmp/unpacked" "$tmp/$archive" >/dev/null
      else
        powershell.exe -NoProfile -Command "Expand-Archive -LiteralPath '$(cygpath -w "$tmp/$archive")' -DestinationPath '$(cygpath -w "$tmp/unpacked")'"
      fi
      ;;
    *) tar -xzf "$tmp/$archive" -C "$tmp/unpacked" ;;
  esac
  found="$(find "$tmp/unpacked" -type f -name "$exe" | head -n 1)"
  [ -n "$found" ] || die "$archive has no $exe"

  mkdir -p "$dir"
  cp "$found" "$dir/$exe.partial"
  chmod +x "$dir/$exe.partial"
  mv -f "$dir/$exe.partial" "$dir/$exe"
  got="$(version_of "$dir/$exe")"
  [ "$got" = "$version" ] || die "the installed $dir/$exe says version '${got}', not $version"
  say "installed prill $version ($target) in $dir"
fi

if [ -n "${GITHUB_PATH:-}" ]; then
  if command -v cygpath >/dev/null 2>&1; then
    cygpath -w "$dir" >>"$GITHUB_PATH"
  else
    echo "$dir" >>"$GITHUB_PATH"
  fi
fi
