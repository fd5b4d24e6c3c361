package io.rdmx.rpc.hadoop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.security.PrivilegedExceptionAction;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocolPB.ClientNamenodeProtocolPB;
import org.apache.hadoop.hdfs.protocol.proto.ClientNamenodeProtocolProtos.GetFileInfoRequestProto;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.ipc.ProtobufRpcEngine2;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.thirdparty.protobuf.ServiceException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

/**
 * A Kerberized HDFS (a MiniDFSCluster against a real KDC, {@link MiniKdc}) with the NameNode client protocol switched
 * to rdmx by configuration only, {@code hadoop.rpc.protection=authentication} (and {@code privacy}: the subclass
 * {@link KerberizedPrivacyMiniDfsOverRdmxTest}, every call and answer wrapped). The NameNode and the DataNode log in
 * from a keytab ({@code hdfs/localhost}, SPNEGO {@code HTTP/localhost}), block access tokens are on and data
 * transfer is SASL-protected, as Hadoop's own secure MiniDFS tests set them up (the DataNode on unprivileged ports,
 * {@code ignore.secure.ports.for.testing}). Every client call to the NameNode is checked to have gone over rdmx
 * (counted), each proxy's SASL negotiation too, and the NameNode to have seen the caller's Kerberos principal (the
 * owner of what it creates). A client that holds only an HDFS delegation token authenticates with TOKEN/DIGEST-MD5
 * over rdmx as the token's owner; cancelled and forged tokens, and a caller without credentials, are refused over
 * rdmx.
 *
 * <p>Kerberos is JVM-global in Hadoop: the class resets {@link UserGroupInformation} to simple authentication
 * afterwards, as {@link KerberosFallbackTest} does.
 */
@EnabledForJreRange(max = JRE.JAVA_22, disabledReason = HadoopJdk.REASON)
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KerberizedMiniDfsOverRdmxTest {
    /** Wrapped requests sent over rdmx (counted by the engine's test hook). */
    private static final AtomicLong WRAPPED = new AtomicLong();
    private java.nio.file.Path work;
    private MiniKdc kdc;
    private MiniDFSCluster cluster;
    private Configuration conf;
    private FileSystem fs;
    private UserGroupInformation alice;

    /** @return the cluster's {@code hadoop.rpc.protection} */
    String protection() {
        return "authentication";
    }

    @BeforeAll
    void startCluster() throws Exception {
        HadoopJdk.assumeHadoopRuns();
        work = Files.createTempDirectory("rdmx-krb-dfs");
        kdc = new MiniKdc(MiniKdc.createConf(), work.toFile());
        kdc.start();
        String realm = kdc.getRealm();
        File keytab = work.resolve("hdfs.keytab").toFile();
        kdc.createPrincipal(keytab, "hdfs/localhost", "HTTP/localhost");
        File aliceKeytab = work.resolve("alice.keytab").toFile();
        kdc.createPrincipal(aliceKeytab, "alice");
        String hdfs = "hdfs/localhost@" + realm;

        conf = new HdfsConfiguration();
        conf.set(CommonConfigurationKeys.HADOOP_SECURITY_AUTHENTICATION, "kerberos");
        conf.set(CommonConfigurationKeys.HADOOP_RPC_PROTECTION, protection());
        conf.set(DFSConfigKeys.DFS_NAMENODE_KERBEROS_PRINCIPAL_KEY, hdfs);
        conf.set(DFSConfigKeys.DFS_NAMENODE_KEYTAB_FILE_KEY, keytab.getPath());
        conf.set(DFSConfigKeys.DFS_DATANODE_KERBEROS_PRINCIPAL_KEY, hdfs);
        conf.set(DFSConfigKeys.DFS_DATANODE_KEYTAB_FILE_KEY, keytab.getPath());
        conf.set(DFSConfigKeys.DFS_WEB_AUTHENTICATION_KERBEROS_PRINCIPAL_KEY, "HTTP/localhost@" + realm);
        conf.set(DFSConfigKeys.DFS_WEB_AUTHENTICATION_KERBEROS_KEYTAB_KEY, keytab.getPath());
        conf.setBoolean(DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_KEY, true);
        conf.set("dfs.data.transfer.protection", "authentication");
        conf.setBoolean(DFSConfigKeys.IGNORE_SECURE_PORTS_FOR_TESTING_KEY, true);
        conf.set("rpc.engine." + ClientNamenodeProtocolPB.class.getName(), RdmxRpcEngine.class.getName());
        conf.setInt("dfs.replication", 1);
        conf.setInt(CommonConfigurationKeys.IPC_CLIENT_CONNECT_MAX_RETRIES_ON_SASL_KEY, 0);
        UserGroupInformation.setConfiguration(conf);
        assertTrue(UserGroupInformation.isSecurityEnabled());
        // the daemons (and this test's superuser client) run as hdfs, as on a real cluster
        UserGroupInformation.loginUserFromKeytab(hdfs, keytab.getPath());
        alice = UserGroupInformation.loginUserFromKeytabAndReturnUGI("alice@" + realm, aliceKeytab.getPath());

        RdmxInvoker.wrappedRequestHook = t -> {
            WRAPPED.incrementAndGet();
            return t;
        };
        cluster = new MiniDFSCluster.Builder(conf, work.resolve("dfs").toFile()).numDataNodes(1).build();
        cluster.waitActive();
        fs = cluster.getFileSystem();
    }

    @AfterAll
    void stopCluster() throws Exception {
        RdmxInvoker.wrappedRequestHook = null;
        try {
            if (fs != null) {
                fs.close();
            }
            if (cluster != null) {
                cluster.shutdown();
            }
        } finally {
            UserGroupInformation.reset();
            Configuration simple = new Configuration(false);
            simple.set(CommonConfigurationKeys.HADOOP_SECURITY_AUTHENTICATION, "simple");
            UserGroupInformation.setConfiguration(simple);
            UserGroupInformation.reset();
            if (kdc != null) {
                kdc.stop();
            }
            if (work != null) {
                try (var files = Files.walk(work)) {
                    files.sorted(java.util.Comparator.reverseOrder()).map(java.nio.file.Path::toFile)
                        .forEach(File::delete);
                }
            }
        }
    }

    /** Runs one operation and checks it made NameNode calls over rdmx and none over the engine's TCP path. */
    private <T> T overRdmx(String what, MiniDfsOverRdmxTest.Op<T> op) throws Exception {
        long client = RdmxRpcEngine.clientCallsOverRdmx();
        long server = RdmxRpcEngine.serverCallsOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        long wrapped = WRAPPED.get();
        T r = op.run();
        assertTrue(RdmxRpcEngine.clientCallsOverRdmx() > client, what + ": no client call went over rdmx");
        assertTrue(RdmxRpcEngine.serverCallsOverRdmx() > server, what + ": the NameNode got no call over rdmx");
        assertEquals(tcp, RdmxRpcEngine.clientCallsOverTcp(), what + ": a call fell back to TCP");
        if ("authentication".equals(protection())) {
            assertEquals(wrapped, WRAPPED.get(), what + ": a call was wrapped under protection=authentication");
        } else {
            assertTrue(WRAPPED.get() > wrapped, what + ": no call was wrapped under protection=" + protection());
        }
        return r;
    }

    @Test
    void kerberosClientsCreateWriteReadRenameListAndDeleteOverRdmxAsTheirPrincipal() throws Exception {
        Path dir = new Path("/krb");
        Path file = new Path(dir, "a.txt");
        Path renamed = new Path(dir, "b.txt");
        byte[] data = new byte[1 << 20];
        Arrays.fill(data, (byte) 'k');
        data[0] = 'x';
        assertTrue(overRdmx("mkdirs", () -> fs.mkdirs(dir)));
        overRdmx("create+write+close", () -> {
            try (FSDataOutputStream out = fs.create(file)) {
                out.write(data);                  // to the DataNode with a block token, SASL data transfer
            }
            return null;
        });
        byte[] read = overRdmx("open+read", () -> {
            byte[] b = new byte[data.length];
            try (FSDataInputStream in = fs.open(file)) {
                IOUtils.readFully(in, b, 0, b.length);
            }
            return b;
        });
        assertArrayEquals(data, read);
        assertTrue(overRdmx("rename", () -> fs.rename(file, renamed)));
        FileStatus[] list = overRdmx("list", () -> fs.listStatus(dir));
        assertEquals(1, list.length);
        assertEquals("hdfs", list[0].getOwner(), "the NameNode did not see the Kerberos principal hdfs/localhost");

        // another principal, with its own FileSystem: the NameNode knows it as alice (owner of its file)
        Path home = new Path("/user/alice");
        assertTrue(overRdmx("mkdirs home", () -> fs.mkdirs(home)));
        overRdmx("chown home", () -> {
            fs.setOwner(home, "alice", null);
            return null;
        });
        long sessions = RdmxRpcEngine.clientSaslSessionsOverRdmx();
        FileSystem aliceFs = alice.doAs((PrivilegedExceptionAction<FileSystem>) () ->
            FileSystem.newInstance(fs.getUri(), conf));
        try {
            Path hers = new Path(home, "hers.txt");
            overRdmx("alice creates", () -> {
                aliceFs.create(hers).close();
                return null;
            });
            assertEquals("alice", overRdmx("alice stats", () -> aliceFs.getFileStatus(hers)).getOwner());
            assertTrue(RdmxRpcEngine.clientSaslSessionsOverRdmx() > sessions, "alice negotiated no SASL over rdmx");
            // and is refused what HDFS refuses her, over rdmx
            assertThrows(AccessControlException.class, () -> overRdmx("alice deletes hdfs's file",
                () -> aliceFs.delete(renamed, false)));
        } finally {
            aliceFs.close();
        }
        assertTrue(overRdmx("delete", () -> fs.delete(renamed, false)));
        assertFalse(overRdmx("exists", () -> fs.exists(renamed)));
    }

    /**
     * A delegation token is issued over rdmx (the NameNode issues tokens to Kerberos-authenticated callers only, so
     * this also shows it sees a Kerberos connection); a user that holds only alice's token (no ticket, and a name of
     * its own) authenticates with TOKEN/DIGEST-MD5 over rdmx: its file operations' NameNode calls go over rdmx (none
     * over TCP), in a SASL session negotiated over rdmx, and the NameNode sees the token's owner (alice owns what it
     * creates). Fails on a listener that offers KERBEROS only (the holder's calls go over TCP).
     */
    @Test
    void aTokenOnlyClientWorksOverRdmxAsTheTokensOwner() throws Exception {
        Token<?> token = aliceToken();
        UserGroupInformation holder = UserGroupInformation.createRemoteUser("token-holder");
        holder.addToken(token);
        long sessions = RdmxRpcEngine.clientSaslSessionsOverRdmx();
        Path parent = new Path("/alice-tokens");
        Path dir = new Path(parent, "by-token");
        Path file = new Path(dir, "t.txt");
        assertTrue(overRdmx("mkdirs", () -> fs.mkdirs(parent)));
        overRdmx("chown", () -> {
            fs.setOwner(parent, "alice", null);
            return null;
        });
        FileStatus st = holder.doAs((PrivilegedExceptionAction<FileStatus>) () -> {
            try (FileSystem tfs = FileSystem.newInstance(URI.create(fs.getUri().toString()), conf)) {
                assertTrue(overRdmx("token mkdirs", () -> tfs.mkdirs(dir)));
                overRdmx("token create+write", () -> {
                    try (FSDataOutputStream out = tfs.create(file)) {
                        out.write(new byte[] {1, 2, 3});
                    }
                    return null;
                });
                byte[] back = overRdmx("token open+read", () -> {
                    byte[] b = new byte[3];
                    try (FSDataInputStream in = tfs.open(file)) {
                        IOUtils.readFully(in, b, 0, 3);
                    }
                    return b;
                });
                assertArrayEquals(new byte[] {1, 2, 3}, back);
                assertEquals(1, overRdmx("token list", () -> tfs.listStatus(dir)).length);
                return overRdmx("token stat", () -> tfs.getFileStatus(file));
            }
        });
        assertEquals("alice", st.getOwner(), "the NameNode did not see the token's owner");
        assertTrue(RdmxRpcEngine.clientSaslSessionsOverRdmx() > sessions, "no SASL session over rdmx");
        assertTrue(overRdmx("delete", () -> fs.delete(parent, true)));
    }

    /**
     * A cancelled token and a forged one (alice's identifier with a wrong password) are refused over rdmx (the
     * client's SASL refusal counted, no call over TCP) with the exception Hadoop's stock engine gets from the same
     * NameNode over TCP (same class and message); nothing runs, and the NameNode keeps serving other clients over
     * rdmx, and a holder of a valid token. Fails on a listener that offers KERBEROS only (the holders go over TCP).
     */
    @Test
    void aCancelledAndAForgedTokenAreRefusedOverRdmxAsOnTcp() throws Exception {
        Token<?> cancelled = aliceToken();
        alice.doAs((PrivilegedExceptionAction<Void>) () -> {
            cancelled.cancel(conf);
            return null;
        });
        Token<?> valid = aliceToken();
        byte[] wrong = valid.getPassword().clone();
        wrong[0] ^= 1;
        @SuppressWarnings({"unchecked", "rawtypes"})
        Token<?> forged = new Token(valid.getIdentifier(), wrong, valid.getKind(), valid.getService());
        for (Token<?> bad : Arrays.asList(cancelled, forged)) {
            String what = bad == cancelled ? "cancelled token" : "forged token";
            long refused = RdmxRpcEngine.clientSaslRefusedOverRdmx();
            long tcp = RdmxRpcEngine.clientCallsOverTcp();
            IOException e = assertThrows(IOException.class, () -> holding(bad).doAs(
                (PrivilegedExceptionAction<Boolean>) () -> {
                    try (FileSystem tfs = FileSystem.newInstance(fs.getUri(), conf)) {
                        return tfs.exists(new Path("/"));
                    }
                }), what + " was not refused");
            assertTrue(RdmxRpcEngine.clientSaslRefusedOverRdmx() > refused, what + ": not refused over rdmx: " + e);
            assertEquals(tcp, RdmxRpcEngine.clientCallsOverTcp(), what + ": the caller went over TCP");
            RemoteException rdmx = remote(e);
            RemoteException stock = remote(overStockTcp(holding(bad)));
            assertNotNull(rdmx, what + ": not the server's refusal: " + e);
            assertNotNull(stock, what + ": the stock engine was not refused by the server");
            assertEquals(stock.getClassName(), rdmx.getClassName(), what + ": " + rdmx + " / stock " + stock);
            assertEquals(stock.getMessage(), rdmx.getMessage(), what);
        }
        assertTrue(overRdmx("another client after the refusals", () -> fs.exists(new Path("/"))));
        assertTrue(holding(valid).doAs((PrivilegedExceptionAction<Boolean>) () -> {
            try (FileSystem tfs = FileSystem.newInstance(fs.getUri(), conf)) {
                return overRdmx("a valid token after the refusals", () -> tfs.exists(new Path("/")));
            }
        }));
    }

    /** A delegation token of alice's (renewer alice), issued over rdmx. */
    private Token<?> aliceToken() throws Exception {
        return alice.doAs((PrivilegedExceptionAction<Token<?>>) () -> {
            try (FileSystem afs = FileSystem.newInstance(fs.getUri(), conf)) {
                Token<?> t = overRdmx("getDelegationToken", () -> afs.getDelegationToken("alice"));
                assertNotNull(t, "no delegation token: the NameNode did not see a Kerberos-authenticated caller");
                return t;
            }
        });
    }

    private static UserGroupInformation holding(Token<?> token) {
        UserGroupInformation u = UserGroupInformation.createRemoteUser("token-holder");
        u.addToken(token);
        return u;
    }

    /** What the NameNode answers over TCP to Hadoop's stock engine (a direct ProtobufRpcEngine2 proxy) for user. */
    private IOException overStockTcp(UserGroupInformation user) throws Exception {
        java.net.InetSocketAddress nn = cluster.getNameNode().getNameNodeAddress();
        return user.doAs((PrivilegedExceptionAction<IOException>) () -> {
            ClientNamenodeProtocolPB p = new ProtobufRpcEngine2().getProxy(ClientNamenodeProtocolPB.class,
                RPC.getProtocolVersion(ClientNamenodeProtocolPB.class), nn, user, conf,
                NetUtils.getDefaultSocketFactory(conf), 0, null).getProxy();
            try {
                p.getFileInfo(null, GetFileInfoRequestProto.newBuilder().setSrc("/").build());
                return null;
            } catch (ServiceException e) {
                return e.getCause() instanceof IOException ? (IOException) e.getCause() : new IOException(e);
            } finally {
                RPC.stopProxy(p);
            }
        });
    }

    private static RemoteException remote(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof RemoteException) {
                return (RemoteException) c;
            }
        }
        return null;
    }

    @Test
    void aCallerWithoutCredentialsIsRefusedOverRdmx() throws Exception {
        fs.exists(new Path("/"));                          // the client knows the NameNode's rdmx listener
        long refused = RdmxRpcEngine.clientSaslRefusedOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        UserGroupInformation mallory = UserGroupInformation.createRemoteUser("mallory");
        IOException e = assertThrows(IOException.class, () -> mallory.doAs((PrivilegedExceptionAction<Boolean>) () -> {
            try (FileSystem mfs = FileSystem.newInstance(fs.getUri(), conf)) {
                return mfs.exists(new Path("/"));
            }
        }));
        assertTrue(RdmxRpcEngine.clientSaslRefusedOverRdmx() > refused, "not refused over rdmx: " + e);
        assertEquals(tcp, RdmxRpcEngine.clientCallsOverTcp(), "the caller went over TCP");
        boolean acl = false;
        for (Throwable c = e; c != null; c = c.getCause()) {
            acl |= c instanceof AccessControlException;
        }
        assertTrue(acl, "not refused as a caller without Kerberos credentials: " + e);
    }
}
