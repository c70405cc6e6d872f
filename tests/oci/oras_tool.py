"""What a user of the `oras` Python client does, for Wharf's e2e tests
(tests/e2e/oci.rs): push a component, read one back, and the raw
manifest moves a tamperer would make.

    python oras_tool.py push HOST:PORT/REPO:TAG FILE    -> prints the manifest digest
    python oras_tool.py pull HOST:PORT/REPO:TAG OUTDIR  -> prints the manifest (JSON)
    python oras_tool.py copy HOST:PORT/REPO:SRC DSTTAG  -> puts SRC's manifest at DSTTAG
    python oras_tool.py htpasswd USER:PASSWORD FILE     -> writes a bcrypt htpasswd file
"""

import hashlib
import json
import os
import sys

import oras.provider
import requests

MANIFEST_TYPES = "application/vnd.oci.image.manifest.v1+json"


def split(target):
    registry, rest = target.split("/", 1)
    repo, tag = rest.rsplit(":", 1)
    return registry, repo, tag


def raw_manifest(target):
    registry, repo, tag = split(target)
    answer = requests.get(
        f"http://{registry}/v2/{repo}/manifests/{tag}",
        headers={"Accept": MANIFEST_TYPES},
        timeout=30,
    )
    answer.raise_for_status()
    return answer.content


def main():
    command, target, arg = sys.argv[1:4]
    if command == "htpasswd":
        import bcrypt

        user, password = target.split(":", 1)
        hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt()).decode()
        with open(arg, "w") as out:
            out.write(f"{user}:{hashed}\n")
        return
    client = oras.provider.Registry(insecure=True)
    if command == "push":
        os.chdir(os.path.dirname(os.path.abspath(arg)))
        client.push(
            target=target,
            files=[f"{os.path.basename(arg)}:application/wasm"],
            quiet=True,
        )
        print("sha256:" + hashlib.sha256(raw_manifest(target)).hexdigest())
    elif command == "pull":
        client.pull(target=target, outdir=arg)
        print(raw_manifest(target).decode())
    elif command == "copy":
        registry, repo, _ = split(target)
        answer = requests.put(
            f"http://{registry}/v2/{repo}/manifests/{arg}",
            data=raw_manifest(target),
            headers={"Content-Type": MANIFEST_TYPES},
            timeout=30,
        )
        answer.raise_for_status()
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
