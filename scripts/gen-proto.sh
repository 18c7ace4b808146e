#!/usr/bin/env bash
# Generates the Go code of Hadoop's RPC and data-transfer messages, which
# the HDFS head speaks, from the .proto files that ship inside the
# github.com/colinmarc/hdfs/v2 module (Hadoop's own definitions, fetched
# by the go command like any module). The output is committed, so builds
# and CI need neither protoc nor this script: run it (make proto) only to
# regenerate. Needs protoc (Debian: protobuf-compiler); protoc-gen-go is
# built at the version go.mod names.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

command -v protoc >/dev/null || { echo "gen-proto: protoc not found (apt-get install protobuf-compiler)" >&2; exit 1; }

src="$(go list -m -f '{{.Dir}}' github.com/colinmarc/hdfs/v2)/internal/protocol"
bin="$PWD/.cache/bin"
mkdir -p "$bin"
GOBIN="$bin" go install google.golang.org/protobuf/cmd/protoc-gen-go

mod=github.com/sluice-streams/sluice
out=hdfsgateway/internal/hadooppb
common=(RpcHeader.proto IpcConnectionContext.proto ProtobufRpcEngine.proto Security.proto HAServiceProtocol.proto ProtocolInfo.proto)
hdfs=(ClientNamenodeProtocol.proto ClientDatanodeProtocol.proto datatransfer.proto hdfs.proto acl.proto xattr.proto encryption.proto inotify.proto erasurecoding.proto ReconfigurationProtocol.proto)

# The files are copied and renamed before protoc sees them: under
# sluice/hadoop/ (their imports too) and in the packages
# sluice.hadoop.common and sluice.hadoop.hdfs. colinmarc/hdfs/v2 (the
# HDFS tier-2 backend) registers the same files under their own names in
# the global protobuf registry, and one binary holding both would panic
# at start ("proto: file ... is already registered"). Protobuf's binary
# encoding carries no package or file names, so the bytes on the wire
# are Hadoop's all the same.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
dir=sluice/hadoop
mkdir -p "$tmp/src/$dir"
for f in "${common[@]/#/$src/hadoop_common/}" "${hdfs[@]/#/$src/hadoop_hdfs/}"; do
	perl -pe '
		s/^package hadoop\.(common|hdfs);/package sluice.hadoop.$1;/;
		s/(?<![.\w])hadoop\.(common|hdfs)\./sluice.hadoop.$1./g;
		s{^import "([^"/]+)";}{import "'"$dir"'/$1";};
	' "$f" >"$tmp/src/$dir/$(basename "$f")"
done

# Every file is mapped to our package (M options): the files' own
# go_package names the other module's internal path.
maps=()
for f in "${common[@]}"; do maps+=("--go_opt=M$dir/$f=$mod/$out/common"); done
for f in "${hdfs[@]}"; do maps+=("--go_opt=M$dir/$f=$mod/$out/hdfs"); done

rm -rf "$out/common" "$out/hdfs"
mkdir -p "$out/common" "$out/hdfs"
PATH="$bin:$PATH" protoc -I "$tmp/src" \
	--go_out="$tmp" "${maps[@]}" \
	"${common[@]/#/$tmp/src/$dir/}" "${hdfs[@]/#/$tmp/src/$dir/}"
cp "$tmp/$mod/$out/common/"*.go "$out/common/"
cp "$tmp/$mod/$out/hdfs/"*.go "$out/hdfs/"
echo "gen-proto: wrote $out/common and $out/hdfs"
