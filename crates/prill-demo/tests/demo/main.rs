//! Tests of the demo server over real loopback connections: endpoints, the wire format,
//! the demo agents, the fault modes, https on the same port, MCP, shutdown and the limits
//! on clients.

mod agents;
mod common;
mod endpoints;
mod faults;
mod limits;
mod mcp;
mod otlp;
mod pages;
mod tls;
