#!/bin/sh
# The image's entrypoint: a command runs as given (compose's `locust ...`, `dynlocust local ...`); arguments that
# start with '-' go to locust, as in Locust's own image, whose entrypoint the Locust operator assumes (it passes only
# arguments: "--master ...", "--worker --master-host ...").
case "${1:-}" in
  -*) set -- locust "$@" ;;
esac
exec "$@"
