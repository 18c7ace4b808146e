package org.sluice.hadooptest;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CompositeCrcFileChecksum;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.fs.MD5MD5CRC32CastagnoliFileChecksum;
import org.apache.hadoop.hdfs.BlockReader;
import org.apache.hadoop.hdfs.PeerCache;
import org.apache.hadoop.hdfs.client.impl.BlockReaderRemote;
import org.apache.hadoop.hdfs.net.NioInetPeer;
import org.apache.hadoop.hdfs.net.Peer;
import org.apache.hadoop.hdfs.protocol.BlockChecksumOptions;
import org.apache.hadoop.hdfs.protocol.BlockChecksumType;
import org.apache.hadoop.hdfs.protocol.DatanodeID;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.datatransfer.BlockConstructionStage;
import org.apache.hadoop.hdfs.protocol.datatransfer.DataTransferProtoUtil;
import org.apache.hadoop.hdfs.protocol.datatransfer.Sender;
import org.apache.hadoop.hdfs.protocol.proto.DataTransferProtos.BlockOpResponseProto;
import org.apache.hadoop.hdfs.protocol.proto.DataTransferProtos.OpBlockChecksumResponseProto;
import org.apache.hadoop.hdfs.protocolPB.PBHelperClient;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
import org.apache.hadoop.hdfs.server.datanode.CachingStrategy;
import org.apache.hadoop.io.MD5Hash;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.util.CrcComposer;
import org.apache.hadoop.util.CrcUtil;
import org.apache.hadoop.util.DataChecksum;

/**
 * Reads blocks straight from one DataNode with Hadoop's own client classes
 * (BlockReaderRemote, as DFSInputStream does; Sender.blockChecksum, as
 * DFSClient's file checksum does), for the Go tests of the HDFS head's
 * DataNode (hdfsgateway/datanode). Usage: BlockRead HOST:PORT POOLID GENSTAMP,
 * then one request per stdin line, one answer per stdout line:
 *
 * <pre>
 * read ID NUMBYTES TOKENHEX OFFSET LEN [nocrc]  ok LEN SHA256HEX | err MESSAGE
 * sum ID NUMBYTES TOKENHEX                      ok BYTESPERCRC CRCPERBLOCK TYPE MD5HEX | err MESSAGE
 * file N (ID NUMBYTES TOKENHEX)xN               ok ALGORITHM BYTESHEX | err MESSAGE
 * csum ID NUMBYTES TOKENHEX [STRIPE]            ok CRCPERBLOCK BLOCKCHECKSUMHEX (COMPOSITE_CRC) | err MESSAGE
 * cfile N (ID NUMBYTES TOKENHEX)xN              ok ALGORITHM BYTESHEX (COMPOSITE_CRC) | err MESSAGE
 * write ID NUMBYTES TOKENHEX                    err MESSAGE (a WRITE_BLOCK the DataNode must refuse)
 * copy ID NUMBYTES TOKENHEX                     err MESSAGE (a COPY_BLOCK, likewise)
 * sockets                                       ok N  (sockets opened so far)
 * </pre>
 *
 * Reads share one PeerCache, so a connection the DataNode keeps open is
 * reused for the next read, as in DFSClient.
 */
public final class BlockRead {
    private final InetSocketAddress addr;
    private final String pool;
    private final long genstamp;
    private final DatanodeID dn;
    private final PeerCache cache = new PeerCache(4, 3_600_000L);
    private final Configuration conf = new Configuration();
    private int sockets;

    private BlockRead(String hostPort, String pool, long genstamp) {
        int colon = hostPort.lastIndexOf(':');
        this.addr = new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
        this.pool = pool;
        this.genstamp = genstamp;
        this.dn = new DatanodeID(addr.getHostString(), addr.getHostString(), "sluice-head", addr.getPort(), 0, 0, 0);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: BlockRead HOST:PORT POOLID GENSTAMP < requests");
            System.exit(2);
        }
        BlockRead br = new BlockRead(args[0], args[1], Long.parseLong(args[2]));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null;) {
            if (line.isBlank()) continue;
            String out;
            try {
                out = "ok " + br.run(line.trim().split(" "));
            } catch (Exception e) {
                out = "err " + String.valueOf(e).replace('\n', ' ');
            }
            System.out.println(out);
            System.out.flush();
        }
        System.exit(0);
    }

    private String run(String[] f) throws Exception {
        switch (f[0]) {
            case "read": {
                boolean crc = !(f.length > 6 && f[6].equals("nocrc"));
                return read(block(f[1], f[2]), token(f[3]), Long.parseLong(f[4]), Long.parseLong(f[5]), crc);
            }
            case "sum": {
                OpBlockChecksumResponseProto r = checksum(block(f[1], f[2]), token(f[3]));
                return r.getBytesPerCrc() + " " + r.getCrcPerBlock() + " " + r.getCrcType() + " "
                        + HexFormat.of().formatHex(r.getBlockChecksum().toByteArray());
            }
            case "file":
                return file(f);
            case "csum": {
                long stripe = f.length > 4 ? Long.parseLong(f[4]) : 0;
                OpBlockChecksumResponseProto r = checksum(block(f[1], f[2]), token(f[3]),
                        new BlockChecksumOptions(BlockChecksumType.COMPOSITE_CRC, stripe));
                return r.getCrcPerBlock() + " " + HexFormat.of().formatHex(r.getBlockChecksum().toByteArray());
            }
            case "cfile":
                return compositeFile(f);
            case "write":
            case "copy":
                return refused(f[0], block(f[1], f[2]), token(f[3]));
            case "sockets":
                return Integer.toString(sockets);
            default:
                throw new IllegalArgumentException("unknown request " + f[0]);
        }
    }

    private ExtendedBlock block(String id, String numBytes) {
        return new ExtendedBlock(pool, Long.parseLong(id), Long.parseLong(numBytes), genstamp);
    }

    private static Token<BlockTokenIdentifier> token(String hex) {
        byte[] ident = HexFormat.of().parseHex(hex);
        return new Token<>(ident, new byte[0], new Text("HDFS_BLOCK_TOKEN"), new Text(""));
    }

    private Peer peer() throws IOException {
        Peer p = cache.get(dn, false);
        if (p != null) return p;
        // A socket with a channel, as DFSClient's socket factory makes.
        Socket s = SocketChannel.open().socket();
        s.connect(addr, 60_000);
        s.setSoTimeout(60_000);
        sockets++;
        return new NioInetPeer(s);
    }

    /** Reads [off, off+len) of a block as DFSInputStream does. */
    private String read(ExtendedBlock b, Token<BlockTokenIdentifier> tok, long off, long len, boolean crc) throws Exception {
        Peer p = peer();
        BlockReader r;
        try {
            r = BlockReaderRemote.newBlockReader("sluice-test", b, tok, off, len, crc, "BlockRead", p, dn,
                    cache, CachingStrategy.newDefaultStrategy(), 0, conf);
        } catch (IOException e) {
            p.close();
            throw e;
        }
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        byte[] buf = new byte[7919]; // not a multiple of anything
        long n = 0;
        try {
            while (n < len) {
                int k = r.read(buf, 0, (int) Math.min(buf.length, len - n));
                if (k < 0) break;
                sha.update(buf, 0, k);
                n += k;
            }
        } finally {
            r.close();
        }
        return n + " " + HexFormat.of().formatHex(sha.digest());
    }

    /** Asks for a block's checksum as DFSClient's file checksum does. */
    private OpBlockChecksumResponseProto checksum(ExtendedBlock b, Token<BlockTokenIdentifier> tok) throws Exception {
        return checksum(b, tok, new BlockChecksumOptions(BlockChecksumType.MD5CRC));
    }

    private OpBlockChecksumResponseProto checksum(ExtendedBlock b, Token<BlockTokenIdentifier> tok,
            BlockChecksumOptions opts) throws Exception {
        try (Socket s = new Socket()) {
            s.connect(addr, 60_000);
            s.setSoTimeout(60_000);
            sockets++;
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
            new Sender(out).blockChecksum(b, tok, opts);
            out.flush();
            BlockOpResponseProto r = BlockOpResponseProto.parseFrom(
                    PBHelperClient.vintPrefixed(new DataInputStream(s.getInputStream())));
            if (r.getStatus() != org.apache.hadoop.hdfs.protocol.proto.DataTransferProtos.Status.SUCCESS) {
                throw new IOException("status " + r.getStatus() + ": " + r.getMessage());
            }
            return r.getChecksumResponse();
        }
    }

    /**
     * Combines block checksums into the file checksum as DFSClient does
     * (FileChecksumHelper): the block MD5s go into a DataOutputBuffer and
     * the file MD5 is taken over the buffer's whole array, zero padding
     * included (getData, not the bytes written).
     */
    private String file(String[] f) throws Exception {
        int n = Integer.parseInt(f[1]);
        org.apache.hadoop.io.DataOutputBuffer md5s = new org.apache.hadoop.io.DataOutputBuffer();
        int bytesPerCrc = 0;
        long crcPerBlock = 0;
        for (int i = 0; i < n; i++) {
            OpBlockChecksumResponseProto r = checksum(block(f[2 + 3 * i], f[3 + 3 * i]), token(f[4 + 3 * i]));
            bytesPerCrc = r.getBytesPerCrc();
            if (i == 0 && n > 1) crcPerBlock = r.getCrcPerBlock();
            md5s.write(r.getBlockChecksum().toByteArray());
        }
        MD5Hash md5 = MD5Hash.digest(md5s.getData());
        MD5MD5CRC32CastagnoliFileChecksum sum = new MD5MD5CRC32CastagnoliFileChecksum(bytesPerCrc, crcPerBlock, md5);
        // getBytes() may hold more than getLength() bytes (FsShell
        // -checksum prints getLength()).
        return sum.getAlgorithmName() + " " + HexFormat.of().formatHex(sum.getBytes(), 0, sum.getLength());
    }

    /** Combines COMPOSITE_CRC block checksums as DFSClient does. */
    private String compositeFile(String[] f) throws Exception {
        int n = Integer.parseInt(f[1]);
        long[] lens = new long[n];
        int[] crcs = new int[n];
        for (int i = 0; i < n; i++) {
            ExtendedBlock b = block(f[2 + 3 * i], f[3 + 3 * i]);
            OpBlockChecksumResponseProto r = checksum(b, token(f[4 + 3 * i]),
                    new BlockChecksumOptions(BlockChecksumType.COMPOSITE_CRC));
            lens[i] = b.getNumBytes();
            crcs[i] = CrcUtil.readInt(r.getBlockChecksum().toByteArray(), 0);
        }
        CrcComposer c = CrcComposer.newCrcComposer(DataChecksum.Type.CRC32C, n > 0 ? lens[0] : 0);
        for (int i = 0; i < n; i++) {
            c.update(crcs[i], lens[i]);
        }
        CompositeCrcFileChecksum sum = new CompositeCrcFileChecksum(CrcUtil.readInt(c.digest(), 0),
                DataChecksum.Type.CRC32C, 512);
        return sum.getAlgorithmName() + " " + HexFormat.of().formatHex(sum.getBytes(), 0, sum.getLength());
    }

    /** Sends a mutating op as Hadoop's writers do and checks the answer as they do. */
    private String refused(String op, ExtendedBlock b, Token<BlockTokenIdentifier> tok) throws Exception {
        try (Socket s = new Socket()) {
            s.connect(addr, 60_000);
            s.setSoTimeout(60_000);
            sockets++;
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
            Sender sender = new Sender(out);
            if (op.equals("write")) {
                sender.writeBlock(b, StorageType.DEFAULT, tok, "BlockRead", new DatanodeInfo[0], new StorageType[0],
                        null, BlockConstructionStage.PIPELINE_SETUP_CREATE, 1, 0, 0, b.getGenerationStamp(),
                        DataChecksum.newDataChecksum(DataChecksum.Type.CRC32C, 512),
                        CachingStrategy.newDefaultStrategy(), false, false, null, null, new String[0]);
            } else {
                sender.copyBlock(b, tok);
            }
            out.flush();
            BlockOpResponseProto r = BlockOpResponseProto.parseFrom(
                    PBHelperClient.vintPrefixed(new DataInputStream(s.getInputStream())));
            DataTransferProtoUtil.checkBlockOpStatus(r, "for OP_" + op.toUpperCase());
            return "accepted";
        }
    }
}
