// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2ccctl's output: a table and one line per record for people, JSON for
 * scripts (one document for status, one object per line for watch).
 */
#include <net/if.h>
#include <string.h>
#include <time.h>

#include "r2ccctl.h"

const char *ctl_state_name(unsigned int state)
{
	static const char *const names[] = {
		[R2CC_PORT_NOP] = "NOP", [R2CC_PORT_DOWN] = "DOWN",
		[R2CC_PORT_INIT] = "INIT", [R2CC_PORT_ARMED] = "ARMED",
		[R2CC_PORT_ACTIVE] = "ACTIVE",
		[R2CC_PORT_ACTIVE_DEFER] = "ACTIVE_DEFER",
	};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] :
	       "UNKNOWN";
}

const char *ctl_kind_name(unsigned int kind)
{
	static const char *const names[] = {
		[R2CC_EV_PORT_DOWN] = "port_down",
		[R2CC_EV_PORT_UP] = "port_up",
		[R2CC_EV_PORT_CHANGE] = "port_change",
		[R2CC_EV_DEVICE_ADD] = "device_add",
		[R2CC_EV_DEVICE_REMOVE] = "device_remove",
		[R2CC_EV_DEVICE_FATAL] = "device_fatal",
		[R2CC_EV_GID_CHANGE] = "gid_change",
		[R2CC_EV_LID_CHANGE] = "lid_change",
		[R2CC_EV_PKEY_CHANGE] = "pkey_change",
		[R2CC_EV_CLIENT_REREGISTER] = "client_reregister",
		[R2CC_EV_SM_CHANGE] = "sm_change",
		[R2CC_EV_OVERFLOW] = "overflow",
		[R2CC_EV_PORT_SPEED] = "port_speed",
		[R2CC_EV_PORT_DEGRADED] = "port_degraded",
		[R2CC_EV_PORT_RECOVERED] = "port_recovered",
	};

	return kind && kind < sizeof(names) / sizeof(names[0]) ?
	       names[kind] : "unknown";
}

const char *ctl_link_layer_name(unsigned int ll)
{
	return ll == 1 ? "InfiniBand" : ll == 2 ? "Ethernet" : "unknown";
}

void ctl_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The netdev's name, "-" when there is none or it is gone. */
static const char *netdev(uint32_t ifindex, char *buf)
{
	if (!ifindex || !if_indextoname(ifindex, buf))
		return "-";
	return buf;
}

/* Seconds since @t_ns (CLOCK_MONOTONIC), -1 when it never changed. */
static double age_s(uint64_t t_ns, uint64_t now)
{
	return t_ns && t_ns <= now ? (double)(now - t_ns) / 1e9 : -1;
}

void ctl_print_status(FILE *f, const struct ctl_port *p, int n,
		      const struct ctl_stats *st, const struct ctl_module *m,
		      int json)
{
	uint64_t now = now_ns();
	char ifn[IF_NAMESIZE];
	int i;

	if (json) {
		fprintf(f, "{\"ports\":[");
		for (i = 0; i < n; i++, p++) {
			double age = age_s(p->last_change_ns, now);

			fprintf(f, "%s{\"device\":", i ? "," : "");
			ctl_json_str(f, p->dev_name);
			fprintf(f, ",\"dev_index\":%u,\"port\":%u,\"state\":\"%s\","
				"\"phys_state\":%u,\"link_layer\":\"%s\","
				"\"netdev\":", p->dev_index, p->port,
				ctl_state_name(p->state), p->phys_state,
				ctl_link_layer_name(p->link_layer));
			if (strcmp(netdev(p->ifindex, ifn), "-"))
				ctl_json_str(f, ifn);
			else
				fputs("null", f);
			fprintf(f, ",\"reason\":%u,\"degraded\":%s,"
				"\"error_rate\":%llu", p->reason,
				p->degraded ? "true" : "false",
				(unsigned long long)p->error_rate);
			fprintf(f, ",\"bandwidth_mbps\":%llu,\"down_events\":%llu,"
				"\"up_events\":%llu,\"flaps\":%llu,"
				"\"down_time_ms\":%llu,\"last_change_ns\":%llu,"
				"\"last_change_age_s\":",
				(unsigned long long)p->bandwidth_mbps,
				(unsigned long long)p->down_events,
				(unsigned long long)p->up_events,
				(unsigned long long)p->flaps,
				(unsigned long long)p->down_time_ms,
				(unsigned long long)p->last_change_ns);
			if (age < 0)
				fputs("null}", f);
			else
				fprintf(f, "%.3f}", age);
		}
		fprintf(f, "],\"events\":{\"emitted\":%llu,\"delivered\":%llu,"
			"\"dropped\":%llu,\"subscribers\":%u},\"module\":{"
			"\"version\":", (unsigned long long)st->emitted,
			(unsigned long long)st->delivered,
			(unsigned long long)st->dropped, st->subscribers);
		ctl_json_str(f, m->version);
		fputs(",\"srcversion\":", f);
		ctl_json_str(f, m->srcversion);
		fputs(",\"parameters\":{", f);
		for (i = 0; i < m->nparams; i++) {
			fputs(i ? "," : "", f);
			ctl_json_str(f, m->param[i]);
			fputc(':', f);
			ctl_json_str(f, m->value[i]);
		}
		fputs("}}}\n", f);
		return;
	}
	fprintf(f, "r2cc.ko version %s, srcversion %s, parameters:",
		m->version[0] ? m->version : "-",
		m->srcversion[0] ? m->srcversion : "-");
	for (i = 0; i < m->nparams; i++)
		fprintf(f, " %s=%s", m->param[i], m->value[i]);
	fputc('\n', f);
	fprintf(f, "%-12s %4s %-7s %-10s %-8s %9s %5s %5s %5s %9s %s\n",
		"device", "port", "state", "link", "netdev", "Mbit/s", "downs",
		"ups", "flaps", "down_ms", "last change");
	for (i = 0; i < n; i++, p++) {
		double age = age_s(p->last_change_ns, now);
		char when[32];

		if (age < 0)
			snprintf(when, sizeof(when), "never");
		else
			snprintf(when, sizeof(when), "%.1f s ago", age);
		fprintf(f, "%-12s %4u %-7s %-10s %-8s %9llu %5llu %5llu %5llu "
			"%9llu %s\n", p->dev_name, p->port,
			ctl_state_name(p->state),
			ctl_link_layer_name(p->link_layer),
			netdev(p->ifindex, ifn),
			(unsigned long long)p->bandwidth_mbps,
			(unsigned long long)p->down_events,
			(unsigned long long)p->up_events,
			(unsigned long long)p->flaps,
			(unsigned long long)p->down_time_ms, when);
	}
	fprintf(f, "events: %llu emitted, %llu delivered, %llu dropped, "
		"%u subscribers\n", (unsigned long long)st->emitted,
		(unsigned long long)st->delivered,
		(unsigned long long)st->dropped, st->subscribers);
}

void ctl_print_event(FILE *f, const struct r2cc_event *ev, int json)
{
	if (json) {
		fprintf(f, "{\"seq\":%llu,\"time_ns\":%llu,\"kind\":\"%s\","
			"\"device\":", (unsigned long long)ev->seq,
			(unsigned long long)ev->time_ns,
			ctl_kind_name(ev->kind));
		ctl_json_str(f, ev->dev_name);
		fprintf(f, ",\"dev_index\":%u,\"port\":%u,\"old_state\":\"%s\","
			"\"new_state\":\"%s\",\"bandwidth_mbps\":%llu,"
			"\"injected\":%s,\"damped\":%s,\"lost\":%llu,"
			"\"reason\":%u,\"old_bandwidth_mbps\":%llu,"
			"\"error_rate\":%llu}\n",
			ev->dev_index, ev->port, ctl_state_name(ev->old_state),
			ctl_state_name(ev->new_state),
			(unsigned long long)ev->bandwidth_mbps,
			ev->flags & R2CC_EVF_INJECTED ? "true" : "false",
			ev->flags & R2CC_EVF_DAMPED ? "true" : "false",
			(unsigned long long)ev->lost, ev->reason,
			(unsigned long long)ev->old_bandwidth_mbps,
			(unsigned long long)ev->error_rate);
		return;
	}
	if (ev->kind == R2CC_EV_OVERFLOW) {
		fprintf(f, "seq %llu overflow: %llu records lost\n",
			(unsigned long long)ev->seq,
			(unsigned long long)ev->lost);
		return;
	}
	fprintf(f, "seq %llu %s %s port %u %s -> %s%s%s",
		(unsigned long long)ev->seq, ctl_kind_name(ev->kind),
		ev->dev_name, ev->port, ctl_state_name(ev->old_state),
		ctl_state_name(ev->new_state),
		ev->flags & R2CC_EVF_INJECTED ? " (injected)" : "",
		ev->flags & R2CC_EVF_DAMPED ? " (damped)" : "");
	if (ev->reason)
		fprintf(f, " reason %s", ev->reason == R2CC_REASON_FATAL ?
			"fatal" : ev->reason == R2CC_REASON_QUERY ? "query" :
			ev->reason == R2CC_REASON_REMOVED ? "removed" :
			"unknown");
	if (ev->kind == R2CC_EV_PORT_SPEED)
		fprintf(f, " %llu -> %llu Mbit/s",
			(unsigned long long)ev->old_bandwidth_mbps,
			(unsigned long long)ev->bandwidth_mbps);
	if (ev->kind == R2CC_EV_PORT_DEGRADED ||
	    ev->kind == R2CC_EV_PORT_RECOVERED)
		fprintf(f, " %llu errors/s", (unsigned long long)ev->error_rate);
	fputc('\n', f);
}
