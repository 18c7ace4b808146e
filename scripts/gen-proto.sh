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

# The descriptors are registered under names of their own: the files as
# sluice/hadooppb/NAME.proto and the packages as sluice.hadoop.common and
# sluice.hadoop.hdfs. colinmarc/hdfs (tier 2's HDFS backend) registers the
# same files under Hadoop's names, and the protobuf runtime panics at init
# when one binary registers a file or message name twice. Package names
# never reach the wire (fields are numbered; Hadoop names methods by
# string), so the bytes are Hadoop's.
ns=sluice/hadooppb
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/$ns"
for f in "${common[@]/#/$src/hadoop_common/}" "${hdfs[@]/#/$src/hadoop_hdfs/}"; do
	perl -pe 's/(?<![\w.])hadoop\.(common|hdfs)\b/sluice.hadoop.$1/g; s{^import "([^"/]+\.proto)";}{import "'"$ns"'/$1";}' \
		"$f" >"$tmp/src/$ns/$(basename "$f")"
done

# Every file is mapped to our package (M options): the files' own
# go_package names the other module's internal path.
maps=()
for f in "${common[@]}"; do maps+=("--go_opt=M$ns/$f=$mod/$out/common"); done
for f in "${hdfs[@]}"; do maps+=("--go_opt=M$ns/$f=$mod/$out/hdfs"); done

rm -rf "$out/common" "$out/hdfs"
mkdir -p "$out/common" "$out/hdfs"
PATH="$bin:$PATH" protoc -I "$tmp/src" \
	--go_out="$tmp" "${maps[@]}" \
	"${common[@]/#/$ns/}" "${hdfs[@]/#/$ns/}"
cp "$tmp/$mod/$out/common/"*.go "$out/common/"
cp "$tmp/$mod/$out/hdfs/"*.go "$out/hdfs/"
echo "gen-proto: wrote $out/common and $out/hdfs"
