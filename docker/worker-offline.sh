#!/bin/bash
# The worker image without a registry, for a machine that cannot pull worker.Dockerfile's base image: a
# root file system made of this machine's own node and pi, and its bash, coreutils, git, grep, sed and
# findutils with the shared libraries they load, imported with `docker import` or `podman import`.
# Needs Debian or Ubuntu (the system packages' file lists come from dpkg), node >= 22.19 and pi 1.6.
#
#   bash docker/worker-offline.sh podman pi-agent-board-worker:pi-1.6
#   /agent-board targets add box --container podman --image pi-agent-board-worker:pi-1.6
set -euo pipefail

engine=${1:-}
tag=${2:-pi-agent-board-worker:pi-1.6}
case "$engine" in docker | podman) ;; *) echo "usage: $0 docker|podman [tag]" >&2 && exit 2 ;; esac

node=$(readlink -f "$(command -v node)")
"$node" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)' ||
	{ echo "node >= 22.19 is needed, $node is $("$node" --version)" >&2 && exit 1; }
cli=$(readlink -f "$(command -v pi)")
pkg=${cli%/dist/*}
[ -f "$pkg/package.json" ] || { echo "pi's package is not where pi ($cli) says" >&2 && exit 1; }
echo "pi $("$node" "$cli" --version) from $pkg, node $("$node" --version)"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib" "$root/usr/local/bin" "$root/usr/local/lib/node_modules/@earendil-works"
# A merged /usr keeps its links (/bin -> usr/bin): files copied through them land in usr/.
for link in bin sbin lib lib64; do
	if [ -L "/$link" ]; then
		to=$(readlink "/$link")
		ln -s "$to" "$root/$link"
		case "$to" in /*) mkdir -p "$root$to" ;; *) mkdir -p "$root/$to" ;; esac
	fi
done

# The tools a worker runs, and every library they and node load (the dynamic loader included).
files=$(dpkg -L bash coreutils git grep sed findutils | grep -E '^/(usr/)?(s?bin|lib/git-core)/[^/]+$|^/usr/share/git-core/' | grep -Ev 'http|imap|daemon|svn|cvs|p4|send-email|gui|gitk|web--browse')
for f in $files; do [ -f "$f" ] && [ ! -d "$f" ] && cp -a --parents "$f" "$root" 2>/dev/null || true; done
[ -e "$root/usr/bin/sh" ] || ln -s bash "$root/usr/bin/sh"
cp "$node" "$root/usr/local/bin/node"
libs=$(for f in "$node" $files; do [ -f "$f" ] && ldd "$f" 2>/dev/null; done | grep -o '/[^ ]*\.so[^ ]*' | sort -u)
for lib in $libs; do cp -L --parents "$lib" "$root"; done

# pi with its dependencies: a global install nests them in its own node_modules; a local one shares its parent's.
if [ -d "$pkg/node_modules" ]; then
	cp -a "$pkg" "$root/usr/local/lib/node_modules/@earendil-works/"
else
	cp -a "${pkg%/@earendil-works/*}/." "$root/usr/local/lib/node_modules/"
fi
ln -s "../lib/node_modules/@earendil-works/$(basename "$pkg")/${cli#"$pkg"/}" "$root/usr/local/bin/pi"

# The model provider's TLS, the users the board runs as, and the mount points it uses.
[ -f /etc/ssl/certs/ca-certificates.crt ] && cp -L --parents /etc/ssl/certs/ca-certificates.crt "$root"
mkdir -p "$root/etc" "$root/tmp" "$root/workspace" "$root/proc" "$root/sys" "$root/dev" \
	"$root/ab/pkg/runner" "$root/ab/pkg/src" "$root/ab/pkg/skills" "$root/ab/run" "$root/ab/session" "$root/ab/pi"
printf 'root:x:0:0:root:/tmp:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
touch "$root/ab/pkg/package.json"
chmod 1777 "$root/tmp"

tar -C "$root" --numeric-owner -cf - . | "$engine" import \
	--change "ENV PATH=/usr/local/bin:/usr/bin:/bin" --change "ENV HOME=/tmp" --change "ENV PI_SKIP_VERSION_CHECK=1" \
	--change "WORKDIR /workspace" - "$tag" >/dev/null
"$engine" run --rm --network none "$tag" pi --version >/dev/null
echo "built $tag: add it with /agent-board targets add <name> --container $engine --image $tag, then targets check <name>"
