#!/bin/sh
# The image's entry point: runs COMMAND (stormcf) as the owner of the working directory, so that a mounted run
# (docker run -v "$PWD:/work" -w /work stormcf check ... --json out.json) writes its files into the directory, and
# they belong to the directory's owner. Rules:
#   - started as root (the image's default): COMMAND runs as the owner (uid and gid) of the working directory; when
#     that is root, as the unprivileged user stormcf if stormcf may write there, else as root (a root-owned mount,
#     or rootless podman, where root in the container is the user who started it);
#   - started as another user (docker run -u "$(id -u):$(id -g)"): COMMAND runs as that user;
#   - HOME is /home/stormcf for the user stormcf and /root for root; any other user gets a fresh HOME under /tmp, so
#     that caches (matplotlib's, stormcf's recourse classifiers) never land in the mounted directory.
set -eu
home_for() {   # home_for UID: a home directory the user UID may write
    case $1 in
        0) echo /root ;;
        "$(id -u stormcf)") echo /home/stormcf ;;
        *) mktemp -d /tmp/home.XXXXXX ;;
    esac
}
if [ "$(id -u)" != 0 ]; then
    HOME=$(home_for "$(id -u)") exec "$@"
fi
uid=$(stat -c %u .) gid=$(stat -c %g .)
if [ "$uid" = 0 ] && setpriv --reuid=stormcf --regid=stormcf --clear-groups test -w .; then
    uid=$(id -u stormcf) gid=$(id -g stormcf)
fi
if [ "$uid" = 0 ]; then
    HOME=/root exec "$@"
fi
home=$(home_for "$uid")
chown "$uid:$gid" "$home"
HOME=$home exec setpriv --reuid="$uid" --regid="$gid" --clear-groups -- "$@"
