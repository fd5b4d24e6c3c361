package io.rdmx.disni;

import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.SVCPostSend;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.KeepAlive;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.internal.WorkQueues;
import java.io.IOException;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A DiSNI connection: an RC queue pair created through DiSNI's rdma_cm binding. WRITE, READ and SEND are posted
 * through DiSNI's stateful verb calls ({@link SVCPostSend}), prepared once per opcode and re-executed with new
 * ids, addresses and lengths; WRITE_WITH_IMM and receives are built per post (DiSNI cannot modify an immediate
 * or a receive in place).
 *
 * <p>Keep-alive (the policy of {@link KeepAlive}, as on {@code verbs}): the node's rdma_cm thread calls
 * {@link #keepAlive} from its sweep; an idle connection WRITEs {@value KeepAlive#PROBE_LENGTH} bytes to the
 * peer's keep-alive target every quarter of the peer timeout, and fails, naming the peer, if that WRITE is not
 * acknowledged within the peer timeout or completes with an error ({@link #probeDone}, CQ thread).
 */
final class DisniConnection extends AbstractConnection {
    private final DisniNode dnode;
    private final RdmaCmId id;
    private final IbvQP qp;
    private final Domain domain;
    private final WorkQueues queues;
    private final ReentrantLock lock = new ReentrantLock();
    /** Prepared posts per opcode (WRITE, SEND, READ) and with or without a scatter/gather entry. */
    private final SVCPostSend[] prepared = new SVCPostSend[6];
    private final KeepAlive keepAlive;
    private final long probeSource;
    private final int probeLkey;
    private final RemoteRegion peerProbe;
    private SVCPostSend probe;
    private boolean closed;

    /**
     * @param node the node
     * @param peerName the peer's node name
     * @param peerAddress the peer's address
     * @param regions the peer's exported regions
     * @param id the rdma_cm id
     * @param qp its queue pair
     * @param domain the queue pair's protection domain
     * @param probeSource address of the bytes this side's probes WRITE (in its control region)
     * @param probeLkey local key of that region
     * @param peerProbe the peer's keep-alive target, or null if it announced none (no keep-alive then)
     */
    DisniConnection(DisniNode node, String peerName, String peerAddress, List<RemoteRegion> regions, RdmaCmId id,
                    IbvQP qp, Domain domain, long probeSource, int probeLkey, RemoteRegion peerProbe) {
        super(node, peerName, peerAddress, regions);
        this.dnode = node;
        this.id = id;
        this.qp = qp;
        this.domain = domain;
        this.queues = new WorkQueues(node.name(), node.options().sendQueueDepth(), node.options().recvQueueDepth());
        this.keepAlive = new KeepAlive(node.options().peerTimeout().toNanos(), System.nanoTime());
        this.probeSource = probeSource;
        this.probeLkey = probeLkey;
        this.peerProbe = peerProbe;
    }

    RdmaCmId id() {
        return id;
    }

    Domain domain() {
        return domain;
    }

    /** The local key of a region posted here: its registration in this queue pair's domain, made on first use. */
    private int localKeyOf(RegionImpl local) {
        try {
            return domain.registrationOf((Registrations) local.handle()).getLkey();
        } catch (RdmxException e) {
            throw new IllegalStateException("disni: " + local + " cannot be used on the connection to '" + peerName()
                + "': " + e.getMessage(), e);
        }
    }

    private static IbvSendWR sendWr(int opcode, int numSge) {
        IbvSendWR wr = new IbvSendWR();
        wr.setOpcode(opcode);
        LinkedList<IbvSge> sges = new LinkedList<>();
        if (numSge > 0) {
            sges.add(new IbvSge());
        }
        wr.setSg_list(sges);
        wr.setNum_sge(numSge);
        return wr;
    }

    private SVCPostSend preparedFor(Opcode op, int length) throws IOException {
        int k = (op == Opcode.SEND ? 2 : op == Opcode.READ ? 4 : 0) + (length == 0 ? 1 : 0);
        SVCPostSend p = prepared[k];
        if (p == null) {
            // a READ needs no fence after WRITEs on this queue pair: the responder executes an RC queue pair's
            // requests in order (see the verbs provider's Endpoint#postSend)
            int opcode = op == Opcode.SEND ? IbvSendWR.IBV_WR_SEND
                : op == Opcode.READ ? IbvSendWR.IBV_WR_RDMA_READ : IbvSendWR.IBV_WR_RDMA_WRITE;
            p = qp.postSend(List.of(sendWr(opcode, length == 0 ? 0 : 1)), null);
            prepared[k] = p;
        }
        return p;
    }

    @Override
    protected int postSendQueue(Opcode op, long wrId, RegionImpl local, int localOffset, int length,
                                RemoteRegion remote, long remoteOffset, int imm, boolean signaled)
        throws ConnectionClosedException {
        lock.lock();
        try {
            if (closed) {
                checkOpen();
                throw new ConnectionClosedException(peerName(), "connection to '" + peerName() + "' is closed", null);
            }
            int rkey = op == Opcode.SEND ? 0 : remote.remoteKey();
            long seq = queues.reserveSend(op, wrId, length, rkey, remoteOffset, signaled);
            if (seq < 0) {
                return Post.SEND_QUEUE_FULL;
            }
            boolean signal = queues.mustSignal(seq);
            int flags = signal ? IbvSendWR.IBV_SEND_SIGNALED : 0;
            long remoteAddr = op == Opcode.SEND ? 0 : remote.address() + remoteOffset;
            if (op == Opcode.WRITE_WITH_IMM) {
                IbvSendWR wr = sendWr(IbvSendWR.IBV_WR_RDMA_WRITE_WITH_IMM, length == 0 ? 0 : 1);
                wr.setWr_id(seq);
                wr.setSend_flags(flags);
                wr.setImm_data(Integer.reverseBytes(imm)); // __be32 on the wire
                wr.getRdma().setRemote_addr(remoteAddr);
                wr.getRdma().setRkey(rkey);
                if (length > 0) {
                    IbvSge sge = wr.getSge(0);
                    sge.setAddr(local.address() + localOffset);
                    sge.setLength(length);
                    sge.setLkey(localKeyOf(local));
                }
                qp.postSend(List.of(wr), null).execute().free();
            } else {
                SVCPostSend p = preparedFor(op, length);
                SVCPostSend.SendWRMod m = p.getWrMod(0);
                m.setWr_id(seq);
                m.setSend_flags(flags);
                if (length > 0) {
                    SVCPostSend.SgeMod sge = m.getSgeMod(0);
                    sge.setAddr(local.address() + localOffset);
                    sge.setLength(length);
                    sge.setLkey(localKeyOf(local));
                }
                if (op != Opcode.SEND) {
                    m.getRdmaMod().setRemote_addr(remoteAddr);
                    m.getRdmaMod().setRkey(rkey);
                }
                p.execute();
            }
            queues.sendPosted(seq, signal);
            return Post.OK;
        } catch (IOException e) {
            closed = true;
            dnode.execute(() -> fail(new ConnectionClosedException(peerName(), "post_send on the connection to '"
                + peerName() + "' failed: " + e.getMessage(), e)));
            throw new ConnectionClosedException(peerName(), "post_send to '" + peerName() + "' failed: "
                + e.getMessage(), e);
        } finally {
            unlock();
        }
    }

    @Override
    protected int postRecv(long wrId, RegionImpl local, int localOffset, int length) throws ConnectionClosedException {
        lock.lock();
        try {
            if (closed) {
                checkOpen();
                throw new ConnectionClosedException(peerName(), "connection to '" + peerName() + "' is closed", null);
            }
            long hwId = queues.reserveRecv(wrId, length);
            if (hwId < 0) {
                return Post.RECV_QUEUE_FULL;
            }
            int lkey = length == 0 ? 0 : localKeyOf(local);
            DisniNode.postRecv(qp, hwId, local.address() + localOffset, length, lkey);
            queues.recvPosted();
            return Post.OK;
        } catch (IOException e) {
            closed = true;
            dnode.execute(() -> fail(new ConnectionClosedException(peerName(), "post_recv on the connection to '"
                + peerName() + "' failed: " + e.getMessage(), e)));
            throw new ConnectionClosedException(peerName(), "post_recv to '" + peerName() + "' failed: "
                + e.getMessage(), e);
        } finally {
            unlock();
        }
    }

    /**
     * Completions go to an inline handler when one is installed (a channel engine installs one), with primitive
     * arguments and no object per completion. They are produced under {@link #lock} (the CQ thread completing a
     * request, a flush), which a post takes, so they wait in the connection's backlog until the lock is released
     * ({@link #unlock}), as in the verbs provider. Compiled here; run only where libdisni is installed.
     */
    @Override
    protected boolean supportsInlineCompletions() {
        return true;
    }

    @Override
    protected boolean defersCompletions() {
        return true;
    }

    @Override
    protected boolean holdsPostLock() {
        return lock.isHeldByCurrentThread();
    }

    /** Releases {@link #lock}; once no longer held, hands over the completions produced under it. */
    private void unlock() {
        lock.unlock();
        postLockReleased();
    }

    /**
     * Keep-alive step (the node's rdma_cm thread, from its sweep): probes an idle connection, fails one whose
     * probe went unanswered for the peer timeout.
     *
     * @param now {@code System.nanoTime()}
     */
    void keepAlive(long now) {
        if (peerProbe == null) {
            return;
        }
        String why = null;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            KeepAlive.Decision d = keepAlive.decide(now, queues.sendsOutstanding());
            if (d == KeepAlive.Decision.PEER_SILENT) {
                why = keepAlive.silentPeerReason(peerName(), peerAddress());
            } else if (d == KeepAlive.Decision.PROBE) {
                if (probe == null) {
                    IbvSendWR wr = sendWr(IbvSendWR.IBV_WR_RDMA_WRITE, 1);
                    wr.setWr_id(DisniNode.CTRL_PROBE);
                    wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
                    wr.getRdma().setRemote_addr(peerProbe.address());
                    wr.getRdma().setRkey(peerProbe.remoteKey());
                    IbvSge sge = wr.getSge(0);
                    sge.setAddr(probeSource);
                    sge.setLength(KeepAlive.PROBE_LENGTH);
                    sge.setLkey(probeLkey);
                    probe = qp.postSend(List.of(wr), null);
                }
                probe.execute();
                keepAlive.probePosted(now);
            }
        } catch (IOException e) {
            why = "keep-alive WRITE to peer '" + peerName() + "' could not be posted: " + e.getMessage();
        } finally {
            unlock();
        }
        if (why != null) {
            fail(new ConnectionClosedException(peerName(), why, null));
        }
    }

    /**
     * A keep-alive probe completed (node's CQ thread).
     *
     * @param status its {@code ibv_wc_status}
     */
    void probeDone(int status) {
        boolean failed;
        lock.lock();
        try {
            keepAlive.probeCompleted(System.nanoTime());
            failed = status != DisniNode.WC_SUCCESS && !closed;
        } finally {
            unlock();
        }
        if (failed) {
            fail(new ConnectionClosedException(peerName(), KeepAlive.unreachableReason(peerName(), peerAddress(),
                "ibv_wc_status " + status), null));
        }
    }

    /** A completion of a user request (node's CQ thread). */
    void complete(long hwId, int status, int byteLength, int flags, int imm) {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            boolean ok = status == DisniNode.WC_SUCCESS;
            boolean hasImm = ok && (flags & DisniNode.WC_WITH_IMM) != 0;
            boolean recv = (hwId & WorkQueues.RECV_BIT) != 0;
            WorkQueues.Failure failure = DisniNode.failure(status, dnode.softRoce(), recv,
                recv ? null : queues.sendOpcode(hwId));
            queues.complete(this, hwId, ok, failure, "ibv_wc_status " + status, byteLength,
                hasImm, Integer.reverseBytes(imm));
        } finally {
            unlock();
        }
    }

    static IbvRecvWR recvWr(long hwId, long addr, int length, int lkey) {
        IbvRecvWR wr = new IbvRecvWR();
        wr.setWr_id(hwId);
        LinkedList<IbvSge> sges = new LinkedList<>();
        if (length > 0) {
            IbvSge sge = new IbvSge();
            sge.setAddr(addr);
            sge.setLength(length);
            sge.setLkey(lkey);
            sges.add(sge);
        }
        wr.setSg_list(sges);
        wr.setNum_sge(sges.size());
        return wr;
    }

    @Override
    protected void onRecvPosted() {
        // receives go to the hardware receive queue (postRecv)
    }

    @Override
    protected void flushSendQueue() {
        lock.lock();
        try {
            closed = true;
            queues.flushAll(this, flushDetail());
        } finally {
            unlock();
        }
    }

    @Override
    protected void closeTransport(Throwable cause) {
        lock.lock();
        try {
            closed = true;
            // flushed before rdma_disconnect (slow in a VM), not after: once the connection reads closed its
            // requests' completions follow at once (fail flushes again, finding nothing)
            queues.flushAll(this, flushDetail());
            for (SVCPostSend p : prepared) {
                if (p != null) {
                    p.free();
                }
            }
            if (probe != null) {
                probe.free();
            }
        } finally {
            unlock();
        }
        dnode.disconnect(this);
    }
}
