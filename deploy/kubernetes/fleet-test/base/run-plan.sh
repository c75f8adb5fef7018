#!/bin/sh
# Runs, one after the other, the plan lines whose sender is the node this pod runs on (or "*"), each as one
# `anyperf client` labelled with the pair, and exits 1 when any of them failed (the Job then shows the pod failed).
# Plan line: SENDER RECEIVER_NODE RECEIVER_ADDRESS [client options...]; blank lines and # comments are skipped, and so
# is a line whose receiver is this node (a "*" sender would otherwise test a node against itself).
set -u
# ANYPERF_CLIENT_OPTIONS: options for every line. The serve's token reaches the client as ANYPERF_TOKEN in the
# environment, which anyperf client reads itself, so it never shows in the process list.
plan=${ANYPERF_PLAN:-/etc/anyperf/plan/plan.txt}
bin=${ANYPERF_BIN:-/anyperf}
node=${NODE_NAME:?set NODE_NAME to the node name (Downward API fieldRef spec.nodeName)}
ran=0 failed=0
while read -r sender receiver address options; do
  case "$sender" in '' | '#'*) continue ;; esac
  [ "$sender" = "$node" ] || [ "$sender" = "*" ] || continue
  [ "$receiver" = "$node" ] && continue
  ran=$((ran + 1))
  echo "plan: $node -> $receiver ($address)"
  set -- client "$address" --label "sender=$node" --label "receiver=$receiver"
  # Word splitting of the options is wanted: they are the Job's and the plan line's client options.
  # shellcheck disable=SC2086
  "$bin" "$@" ${ANYPERF_CLIENT_OPTIONS:-} $options </dev/null || failed=$((failed + 1))
done <"$plan"
echo "plan: $node ran $ran pairs, $failed failed"
[ "$failed" -eq 0 ]
