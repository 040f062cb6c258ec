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
import { webhookRoutes } from './webhooks.js';

/** Every operation of the service, spec and extensions: the one route table. */
export const ROUTES: Route[] = [...mailingRoutes, ...memberRoutes, ...importRoutes, ...exportRoutes, ...groupRoutes, ...subscriptionRoutes, ...searchRoutes, ...fieldRoutes, ...accountRoutes, ...webhookRoutes];
