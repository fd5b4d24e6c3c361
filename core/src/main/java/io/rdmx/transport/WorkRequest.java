package io.rdmx.transport;

/**
 * A mutable work request, reusable: post it, change offsets or lengths, post it again. Nothing is captured
 * by {@link Connection#post(WorkRequest)} but the values at the time of the call.
 *
 * <p>Not thread-safe; give each posting thread its own requests.
 */
public final class WorkRequest {
    Opcode opcode = Opcode.SEND;
    long wrId;
    Region local;
    int localOffset;
    int length;
    RemoteRegion remote;
    long remoteOffset;
    int immediate;
    boolean signaled = true;

    /** Creates an empty request (SEND, signaled). */
    public WorkRequest() {
    }

    /**
     * A WRITE.
     *
     * @param src local source region
     * @param srcOffset offset in the source
     * @param length bytes to write
     * @param dst the peer's region
     * @param dstOffset offset in the peer's region
     * @return the request
     */
    public static WorkRequest write(Region src, int srcOffset, int length, RemoteRegion dst, long dstOffset) {
        return new WorkRequest().opcode(Opcode.WRITE).local(src, srcOffset, length).remote(dst, dstOffset);
    }

    /**
     * A WRITE_WITH_IMM.
     *
     * @param src local source region
     * @param srcOffset offset in the source
     * @param length bytes to write
     * @param dst the peer's region
     * @param dstOffset offset in the peer's region
     * @param imm the immediate delivered with the peer's RECV completion
     * @return the request
     */
    public static WorkRequest writeImm(Region src, int srcOffset, int length, RemoteRegion dst, long dstOffset,
                                       int imm) {
        return write(src, srcOffset, length, dst, dstOffset).opcode(Opcode.WRITE_WITH_IMM).immediate(imm);
    }

    /**
     * A READ: copies bytes of a peer's region into a local one.
     *
     * @param dst local target region ({@link Access#LOCAL_WRITE})
     * @param dstOffset offset in the target
     * @param length bytes to read
     * @param src the peer's region ({@link Access#REMOTE_READ})
     * @param srcOffset offset in the peer's region
     * @return the request
     */
    public static WorkRequest read(Region dst, int dstOffset, int length, RemoteRegion src, long srcOffset) {
        return new WorkRequest().opcode(Opcode.READ).local(dst, dstOffset, length).remote(src, srcOffset);
    }

    /**
     * A SEND.
     *
     * @param src local source region
     * @param srcOffset offset in the source
     * @param length bytes to send
     * @return the request
     */
    public static WorkRequest send(Region src, int srcOffset, int length) {
        return new WorkRequest().opcode(Opcode.SEND).local(src, srcOffset, length);
    }

    /**
     * A RECV.
     *
     * @param dst local target region
     * @param offset offset in the target
     * @param length capacity of the receive buffer
     * @return the request
     */
    public static WorkRequest recv(Region dst, int offset, int length) {
        return new WorkRequest().opcode(Opcode.RECV).local(dst, offset, length);
    }

    /**
     * @param v the opcode
     * @return this
     */
    public WorkRequest opcode(Opcode v) {
        this.opcode = v;
        return this;
    }

    /**
     * @param v the id reported in the completion
     * @return this
     */
    public WorkRequest wrId(long v) {
        this.wrId = v;
        return this;
    }

    /**
     * @param region local region
     * @param offset offset in it
     * @param len bytes
     * @return this
     */
    public WorkRequest local(Region region, int offset, int len) {
        this.local = region;
        this.localOffset = offset;
        this.length = len;
        return this;
    }

    /**
     * @param offset new local offset
     * @param len new length
     * @return this
     */
    public WorkRequest local(int offset, int len) {
        this.localOffset = offset;
        this.length = len;
        return this;
    }

    /**
     * @param region the peer's region
     * @param offset offset in it
     * @return this
     */
    public WorkRequest remote(RemoteRegion region, long offset) {
        this.remote = region;
        this.remoteOffset = offset;
        return this;
    }

    /**
     * @param offset new remote offset
     * @return this
     */
    public WorkRequest remoteOffset(long offset) {
        this.remoteOffset = offset;
        return this;
    }

    /**
     * @param v the immediate (WRITE_WITH_IMM)
     * @return this
     */
    public WorkRequest immediate(int v) {
        this.immediate = v;
        return this;
    }

    /**
     * @param v false to suppress the success completion (errors are always reported)
     * @return this
     */
    public WorkRequest signaled(boolean v) {
        this.signaled = v;
        return this;
    }

    /** @return the opcode */
    public Opcode opcode() {
        return opcode;
    }

    /** @return the request id */
    public long wrId() {
        return wrId;
    }

    /** @return the local region */
    public Region local() {
        return local;
    }

    /** @return the local offset */
    public int localOffset() {
        return localOffset;
    }

    /** @return the length */
    public int length() {
        return length;
    }

    /** @return the remote region, or null */
    public RemoteRegion remote() {
        return remote;
    }

    /** @return the remote offset */
    public long remoteOffset() {
        return remoteOffset;
    }

    /** @return the immediate */
    public int immediate() {
        return immediate;
    }

    /** @return whether a success completion is generated */
    public boolean signaled() {
        return signaled;
    }

    @Override
    public String toString() {
        return "WorkRequest{opcode=" + opcode + ", wrId=" + wrId + ", localOffset=" + localOffset + ", length="
            + length + ", remote=" + remote + ", remoteOffset=" + remoteOffset + "}";
    }
}
