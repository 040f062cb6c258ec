// Types for the undici module deliver.ts loads on its own (undici types only its index;
// api-request.js is declared in src/client/undici-parts.d.ts).
declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici';
  export default Agent;
}
