//! The MCP stdio server: one tool, `web_fetch`, with the FR-WF-02 input schema
//! plus our extension properties ([`ArgsSchema::Extended`]: `extraction`), each
//! optional; a call that uses none gets exactly the SRD's response.
//!
//! A success returns the response JSON as text content; a tool error returns
//! `isError: true` with the error envelope as text, so the model can read the code.
//! The server speaks only protocol on stdout; logs go to stderr.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::args::ArgsSchema;
use crate::executor::{ToolCtx, ToolExecutor, run_tool};
use crate::tool::WebFetchTool;

/// Default byte budget for one MCP tool result: small enough for common clients'
/// tool-output limits (about 25k tokens), large enough for dozens of chunks.
pub const DEFAULT_MCP_MAX_OUTPUT_BYTES: usize = 60_000;

/// The `web_fetch` MCP server.
#[derive(Clone)]
pub struct WebFetchServer {
    tool: Arc<WebFetchTool>,
    max_output_bytes: usize,
}

impl WebFetchServer {
    /// A server around a tool, which it serves with the extended schema; each
    /// call's output fits `max_output_bytes`.
    pub fn new(tool: WebFetchTool, max_output_bytes: usize) -> WebFetchServer {
        WebFetchServer {
            tool: Arc::new(tool.with_schema(ArgsSchema::Extended)),
            max_output_bytes,
        }
    }

    fn tool_definition(&self) -> Tool {
        let schema = match self.tool.input_schema() {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        Tool::new(self.tool.name(), self.tool.description(), schema)
    }

    /// Serves MCP over stdin/stdout until the client disconnects.
    pub async fn serve_stdio(self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let running = self.serve(rmcp::transport::stdio()).await?;
        running.waiting().await?;
        Ok(())
    }
}

impl ServerHandler for WebFetchServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("webfetch", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "web_fetch fetches an http(s) URL and returns its readable content as token-bounded \
                 Markdown chunks in JSON. Private networks and robots.txt-disallowed pages are refused. \
                 Pass extraction: \"article\" for just the main text of an article or post.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(vec![
            self.tool_definition(),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if request.name != self.tool.name() {
            return Err(McpError::invalid_params(
                format!(
                    "unknown tool `{}`; this server has only `web_fetch`",
                    request.name
                ),
                None,
            ));
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        let mut ctx = ToolCtx::new(self.max_output_bytes, self.max_output_bytes);
        let result = run_tool(self.tool.as_ref(), args, &mut ctx).await;
        let content = vec![ContentBlock::text(result.content)];
        Ok(if result.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }
}
