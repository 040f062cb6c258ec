import type { Route } from '../route.js';
import { accountRoutes } from './accounts.js';
import { fieldRoutes } from './fields.js';
import { groupRoutes } from './groups.js';
import { memberRoutes } from './members.js';
import { subscriptionRoutes } from './subscriptions.js';
import { importRoutes } from './imports.js';
import { exportRoutes } from './exports.js';
import { searchRoutes } from './searches.js';
import { mailingRoutes } from './mailings.js';
import { reportRoutes } from './reports.js';
import { smsRoutes } from './sms.js';
import { subaccountRoutes } from './subaccounts.js';
import { eventRoutes, touchpointRoutes } from './events.js';
import { workflowRoutes } from './workflows.js';
import { webhookRoutes } from './webhooks.js';
import { mailRoutes } from './mail.js';

/** Every operation of the service, spec and extensions: the one route table (one line a resource, so parallel work merges). */
export const ROUTES: Route[] = [
  ...mailingRoutes,
  ...memberRoutes,
  ...importRoutes,
  ...exportRoutes,
  ...groupRoutes,
  ...subscriptionRoutes,
  ...searchRoutes,
  ...fieldRoutes,
  ...accountRoutes,
  ...reportRoutes,
  ...smsRoutes,
  ...subaccountRoutes,
  ...eventRoutes,
  ...touchpointRoutes,
  ...workflowRoutes,
  ...webhookRoutes,
  ...mailRoutes,
];
