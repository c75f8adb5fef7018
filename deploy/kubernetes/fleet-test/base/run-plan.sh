#!/bin/sh
# Runs, one after the other, the plan lines whose sender is the node this pod runs on (or "*"), each as one
# `anyperf client` labelled with the pair, and exits 1 when any of them failed (the Job then shows the pod failed).
# Plan line: SENDER RECEIVER_NODE [client options...]; blank lines and # comments are skipped, and so is a line whose
# receiver is this node (a "*" sender would otherwise test a node against itself). The receiver's address is found
# when the line runs, by `anyperf locate`: the serve among the headless Service's addresses whose node label is
# RECEIVER_NODE, so the plan outlives a rollout of the serve pods.
set -u
# ANYPERF_CLIENT_OPTIONS: options for every line. The serve's token reaches the client (and locate) as ANYPERF_TOKEN
# in the environment, which anyperf reads itself, so it never shows in the process list.
# ANYPERF_SERVICE: the serves' headless Service (default anyperf, this namespace's); ANYPERF_STATUS_PORT: their
# status port. ANYPERF_PUSHGATEWAY / ANYPERF_PUSH: where each pair's final figures go (--pushgateway / --push), so
# every pod's results end up in one place.
plan=${ANYPERF_PLAN:-/etc/anyperf/plan/plan.txt}
bin=${ANYPERF_BIN:-/anyperf}
service=${ANYPERF_SERVICE:-anyperf}
node=${NODE_NAME:?set NODE_NAME to the node name (Downward API fieldRef spec.nodeName)}
ran=0 failed=0
while read -r sender receiver options; do
  case "$sender" in '' | '#'*) continue ;; esac
  [ "$sender" = "$node" ] || [ "$sender" = "*" ] || continue
  [ "$receiver" = "$node" ] && continue
  ran=$((ran + 1))
  if ! address=$("$bin" locate "$service" "$receiver" --port "${ANYPERF_STATUS_PORT:-9100}" </dev/null); then
    echo "plan: $node -> $receiver: no address (see above)"
    failed=$((failed + 1))
    continue
  fi
  echo "plan: $node -> $receiver ($address)"
  set -- client "$address" --label "sender=$node" --label "receiver=$receiver"
  [ -n "${ANYPERF_PUSHGATEWAY:-}" ] && set -- "$@" --pushgateway "$ANYPERF_PUSHGATEWAY"
  [ -n "${ANYPERF_PUSH:-}" ] && set -- "$@" --push "$ANYPERF_PUSH"
  # Word splitting of the options is wanted: they are the Job's and the plan line's client options.
  # shellcheck disable=SC2086
  "$bin" "$@" ${ANYPERF_CLIENT_OPTIONS:-} $options </dev/null || failed=$((failed + 1))
done <"$plan"
echo "plan: $node ran $ran pairs, $failed failed"
[ "$failed" -eq 0 ]
