/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Wire protocol between r2cc-testbed (host) and r2cc-tb-agent (guest).
 *
 * Every message in either direction is a frame:
 *
 *	u8  type
 *	u32 length	(big endian, payload bytes that follow)
 *	u8  payload[length]
 *
 * The host opens one TCP connection per command, sends TB_ARGV, optionally
 * TB_CWD and TB_STDIN frames, then TB_STDIN_EOF (which also means "start" if
 * the command is not running yet).  The agent answers with TB_STDOUT and
 * TB_STDERR frames and ends with one TB_EXIT frame whose payload is a u32
 * (big endian): the exit code, or 128 + signal number.  A host that goes
 * away kills the command's whole process group.
 */
#ifndef R2CC_TB_PROTO_H
#define R2CC_TB_PROTO_H

#define TB_AGENT_PORT	7000
#define TB_HDR_LEN	5
#define TB_MAX_FRAME	(1u << 20)

enum tb_frame_type {
	TB_ARGV		= 'A',	/* NUL-separated argv, at least one element */
	TB_CWD		= 'D',	/* working directory; "/" if it does not exist */
	TB_STDIN	= 'I',	/* bytes for the command's stdin */
	TB_STDIN_EOF	= 'i',	/* close stdin; starts the command */
	TB_STDOUT	= 'O',
	TB_STDERR	= 'E',
	TB_EXIT		= 'X',
	TB_ERROR	= 'F',	/* agent-side failure text, followed by TB_EXIT */
};

#endif
