"""Checks deploy/k8s/router/envoy.yaml against Envoy's v3 API (manual check, see deploy/README.md).

Needs `pip install envoy-data-plane pyyaml`. Parses the bootstrap with the generated API
classes (an unknown field anywhere, typed_config included, is an error), then compares the
round trip with the input so nothing was silently dropped. Exit 0 when clean.
"""

import re
import sys

import yaml
from envoy_data_plane.envoy.config.bootstrap.v3 import Bootstrap
# Register the typed_config messages the file uses.
import envoy_data_plane.envoy.extensions.filters.http.health_check.v3  # noqa: F401
import envoy_data_plane.envoy.extensions.filters.http.router.v3  # noqa: F401
import envoy_data_plane.envoy.extensions.filters.network.http_connection_manager.v3  # noqa: F401
import envoy_data_plane.envoy.extensions.upstreams.http.v3  # noqa: F401


def camel(key):
    if key.startswith("@") or "." in key:
        return key
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), key)


def leaves(value, path=""):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from leaves(inner, f"{path}.{camel(key)}")
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from leaves(inner, f"{path}[{index}]")
    elif value not in ({}, []):
        yield path


def main(path):
    with open(path, encoding="utf-8") as file:
        config = yaml.safe_load(file)
    parsed = Bootstrap.from_dict(config).to_dict(include_default_values=True)
    dropped = sorted(set(leaves(config)) - set(leaves(parsed)))
    for leaf in dropped:
        print(f"dropped: {leaf}")
    print(f"{path}: {len(list(leaves(config)))} fields, {len(dropped)} dropped")
    return 1 if dropped else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "deploy/k8s/router/envoy.yaml"))
